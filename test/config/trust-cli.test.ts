// `warren trust` and `/trust`: trusting a project folder's own files. `warren trust` also allows
// the folder's .mcp.json (as `warren mcp allow`), `--revoke` forgets both, `--list` names them;
// `/trust` in the TUI trusts the settings files as read at start.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { loadConfig } from "../../src/config/config.js";
import { isAllowed } from "../../src/mcp/allow.js";
import { createActions } from "../../src/ui/actions.js";
import { parseCommand } from "../../src/ui/commands.js";
import { createController } from "../../src/ui/controller.js";
import { useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

function folder() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-trust-"));
  const work = path.join(dir, "clone");
  mkdirSync(path.join(work, ".git"), { recursive: true });
  mkdirSync(path.join(work, ".claude"), { recursive: true });
  const env = {
    HOME: path.join(dir, "home"),
    WARREN_HOME: path.join(dir, "warren-home"),
    WARREN_CONFIG: path.join(dir, "none.json"),
  };
  return { work, env };
}

describe("warren trust", () => {
  it("allows the folder's .mcp.json too; --list names it; --revoke forgets it", async () => {
    const { work, env } = folder();
    writeFileSync(
      path.join(work, ".mcp.json"),
      JSON.stringify({ mcpServers: { proj: { command: "node", args: ["srv.mjs"] } } }),
    );
    expect(isAllowed(loadConfig(env, work).projectMcp!.allow)).toBe(false);
    const trusted = await e2e.warren(["trust"], env, work);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toContain(`trusting ${path.join(work, ".mcp.json")}`);
    expect(trusted.stdout).toMatch(/^ {2}proj {2}stdio .*srv\.mjs/m);
    expect(isAllowed(loadConfig(env, work).projectMcp!.allow)).toBe(true);

    const listed = await e2e.warren(["trust", "--list"], env, work);
    expect(listed.stdout).toContain(`${path.join(work, ".mcp.json")}  mcp servers`);

    const revoked = await e2e.warren(["trust", "--revoke"], env, work);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`no longer trusted: ${path.join(work, ".mcp.json")}`);
    expect(isAllowed(loadConfig(env, work).projectMcp!.allow)).toBe(false);
  }, 60_000);

  it("nothing to trust, or a bad folder, is one line and exit 1", async () => {
    const { work, env } = folder();
    const none = await e2e.warren(["trust"], env, work);
    expect(none.code).toBe(1);
    expect(none.stderr.trim().split("\n")).toHaveLength(1);
    expect(none.stderr).toContain("nothing to trust in");
    const bad = await e2e.warren(["trust", path.join(work, "nope")], env, work);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("is not a directory");
  }, 60_000);
});

describe("/trust in the TUI", () => {
  it("parses", () => {
    expect(parseCommand("/trust")).toEqual({ ok: true, command: { name: "trust" } });
    expect(parseCommand("/trust x")).toMatchObject({ ok: false });
  });

  it("trusts the settings files waiting at start; they apply at once, in the running config", async () => {
    const { work, env } = folder();
    const file = path.join(work, ".claude", "settings.json");
    writeFileSync(file, JSON.stringify({ env: { FROM_PROJECT: "1" } }));
    const config = loadConfig(env, work);
    expect(config.shellEnv.set).toEqual({});
    const db = e2e.db();
    const root = await createTree(db, { name: "tui-root" });
    const controller = createController({
      db,
      feed: {
        treeId: root.id,
        subscribe: () => () => {},
        watchStreams: () => {},
        close: async () => {},
      },
      rootId: root.id,
      onChange: () => {},
      onError: (message) => expect.fail(message),
    });
    await controller.start();
    let changed = 0;
    const actions = createActions({
      db,
      config,
      controller,
      helpLines: () => [],
      treeLines: () => [],
      search: () => {},
      tasks: () => {},
      quit: () => {},
      onChange: () => {},
      cwd: work,
      env,
      configChanged: () => changed++,
    });
    const notices = () =>
      controller
        .entries()
        .flatMap((e) => (e.kind === "notice" ? [e.text] : []))
        .join("\n");
    try {
      await actions.submit("/trust");
      expect(notices()).toContain(`trusted ${file}: they apply from the next tool call`);
      // The running config (and, told by configChanged, every worker thread's) has them now.
      expect(config.shellEnv.set).toEqual({ FROM_PROJECT: "1" });
      expect(changed).toBe(1);
    } finally {
      controller.close();
    }
  }, 60_000);
});
