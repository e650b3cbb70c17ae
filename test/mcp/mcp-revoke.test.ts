// A project's .mcp.json no longer allowed mid-session (`warren trust --revoke`, `warren mcp
// allow`'s store forgotten): a thread that holds a connection to its server sends it nothing more
// and closes it; the call is refused as for a server never allowed. The fault server answers its
// pid to `ok`.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { revokeTrust } from "../../src/config/trust.js";
import { rememberAllow } from "../../src/mcp/allow.js";
import { callMcpTool, closeMcpConnections } from "../../src/mcp/connections.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FAULTS = path.join(root, "test/mcp/fixtures/fault-server.mjs");

afterAll(async () => {
  await closeMcpConnections();
});

describe("a project server no longer allowed", () => {
  it("is not called again through the connection this thread holds", async () => {
    // Outside /tmp: the server runs in the sandbox, whose /tmp is private.
    const repo = mkdtempSync(path.join("/var/tmp", "warren-mcp-revoke-"));
    mkdirSync(path.join(repo, ".git"));
    writeFileSync(
      path.join(repo, ".mcp.json"),
      JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FAULTS] } } }),
    );
    const config = path.join(repo, "config.json");
    writeFileSync(config, JSON.stringify({ trusted_paths: [path.dirname(FAULTS)] }));
    const env = {
      HOME: path.join(repo, "home"),
      WARREN_HOME: path.join(repo, "wh"),
      WARREN_CONFIG: config,
    };
    const project = loadConfig(env, repo).projectMcp!;
    const server = project.servers.fx!;
    rememberAllow(project.allow);
    const signal = new AbortController().signal;

    const first = await callMcpTool("fx", server, "ok", {}, signal);
    expect(first.ok, JSON.stringify(first)).toBe(true);
    expect(revokeTrust(repo, env)).toEqual([project.file]);
    const second = await callMcpTool("fx", server, "ok", {}, signal);
    expect(second.ok).toBe(false);
    expect(JSON.stringify(second)).toContain("which is not allowed");
    expect(JSON.stringify(second)).toContain("nothing was run");

    // Allowed again: it starts again.
    rememberAllow(project.allow);
    const third = await callMcpTool("fx", server, "ok", {}, signal);
    expect(third.ok, JSON.stringify(third)).toBe(true);
  }, 60_000);
});
