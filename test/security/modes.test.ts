// Issue 37 item 4: what warren creates in its home is the person's alone (files 0600, folders
// 0700: the embedded database's password file, its data directory, its log and socket folder,
// the MCP allow store), and a config file that holds secrets and other users may read is one
// warning line at start (warren never changes the person's file itself).
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { ensureEmbedded, stopEmbedded } from "../../src/db/embedded.js";
import { allowKey, allowStorePath, rememberAllow } from "../../src/mcp/allow.js";

const modeOf = (p: string) => statSync(p).mode & 0o777;
/**
 * No permission for group or others. Run as root, the postgres user that runs the server is
 * given search permission (`o+x`, or an ACL where setfacl exists) on the folders above its data.
 */
const privateTo = (p: string) => modeOf(p) & (process.getuid?.() === 0 ? 0o076 : 0o077);

describe("warren's home is the person's alone", () => {
  const base = mkdtempSync(path.join(os.tmpdir(), "warren-modes-"));
  afterAll(async () => {
    await stopEmbedded(path.join(base, "warren")).catch(() => undefined);
    rmSync(base, { recursive: true, force: true });
  });

  it("the embedded database's home, password file, data, log and socket folder", async () => {
    const home = path.join(base, "warren");
    await ensureEmbedded(home, { notice: () => undefined });
    expect(privateTo(home)).toBe(0);
    expect(modeOf(path.join(home, "postgres.json"))).toBe(0o600);
    expect(modeOf(path.join(home, "pgdata"))).toBe(0o700);
    expect(privateTo(path.join(home, "run"))).toBe(0);
    for (const entry of ["postgres.json", "pgdata", "run"]) {
      expect(privateTo(path.join(home, entry)), entry).toBe(0);
    }
    const log = path.join(home, "postgres.log");
    expect(modeOf(log) & 0o077).toBe(0);
  }, 120_000);

  it("the MCP allow store and the folder made for it", () => {
    const env = { WARREN_HOME: path.join(base, "other", "home") };
    const store = allowStorePath(env);
    rememberAllow({ file: "/x/.mcp.json", key: allowKey("/x/.mcp.json", "{}"), store });
    expect(modeOf(store)).toBe(0o600);
    expect(modeOf(path.dirname(store))).toBe(0o700);
  });
});

describe("a config file with secrets that others may read", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-modes-config-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "config.json");
  const load = () => loadConfig({ WARREN_CONFIG: file, HOME: dir }, dir).warnings ?? [];
  const line = (mode: string) =>
    `${file} holds secrets and other users may read it (mode ${mode}): chmod 600 ${file}`;

  it("is one warning line, and the file is left as it is", () => {
    writeFileSync(file, JSON.stringify({ api_key: "sk-x" }));
    chmodSync(file, 0o644);
    expect(load().filter((w) => w.includes("other users"))).toEqual([line("644")]);
    expect(modeOf(file)).toBe(0o644);
    chmodSync(file, 0o640);
    expect(load()).toContain(line("640"));
    writeFileSync(
      file,
      JSON.stringify({ mcp_servers: { s: { url: "http://h/mcp", headers: { A: "b" } } } }),
    );
    chmodSync(file, 0o604);
    expect(load()).toContain(line("604"));
  });

  it("says nothing at 0600, or without secrets", () => {
    writeFileSync(file, JSON.stringify({ api_key: "sk-x" }));
    chmodSync(file, 0o600);
    expect(load()).toEqual([]);
    writeFileSync(file, JSON.stringify({ model: "m" }));
    chmodSync(file, 0o644);
    expect(load()).toEqual([]);
  });
});
