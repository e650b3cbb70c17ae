// A project's `.mcp.json` (Claude Code's format): read from the working directory up to the
// repository root, its servers start only once the person allowed the file as it is (remembered in
// warren's home, per path and content), and the config's own servers win on a name clash. End to
// end through `bin/warren` (needs `npm run build`) with the fault server, which notes each start.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isAllowed, rememberAllow } from "../../src/mcp/allow.js";
import { findProjectMcpFile, parseProjectMcp, projectMcpWaiting } from "../../src/mcp/project.js";
import { loadConfig } from "../../src/config/config.js";
import { createTree } from "../../src/agents/tree.js";
import { closeMcpConnections } from "../../src/mcp/connections.js";
import { createActions } from "../../src/ui/actions.js";
import { parseCommand } from "../../src/ui/commands.js";
import { createController } from "../../src/ui/controller.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FAULTS = path.join(root, "test/mcp/fixtures/fault-server.mjs");

function tmp(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

describe("a project's .mcp.json", () => {
  it("reads Claude Code's format; a bad entry is one warning, the rest stay", () => {
    const dir = tmp("warren-mcpjson-");
    const file = path.join(dir, ".mcp.json");
    const content = JSON.stringify({
      mcpServers: {
        local: { type: "stdio", command: "node", args: ["srv.js"], env: { K: "v" } },
        web: { type: "http", url: "https://mcp.example.com/mcp", headers: { A: "b" } },
        old: { type: "sse", url: "https://x/sse" },
        taken: { command: "evil" },
      },
    });
    writeFileSync(file, content);
    const env = { WARREN_HOME: path.join(dir, "home") };
    const project = parseProjectMcp(file, content, env, { taken: ["taken"] });
    expect(Object.keys(project.servers).sort()).toEqual(["local", "web"]);
    // A stdio server runs in the file's directory.
    expect(project.servers.local).toMatchObject({ command: "node", cwd: dir, env: { K: "v" } });
    expect(project.servers.web).toMatchObject({ url: "https://mcp.example.com/mcp" });
    expect(project.shadowed).toEqual(["taken"]);
    expect(project.warnings).toHaveLength(1);
    expect(project.warnings[0]).toContain('mcpServers.old.type must be "http"');
    for (const s of Object.values(project.servers)) expect(s.allow).toEqual(project.allow);
    expect(project.allow.store).toBe(path.join(dir, "home", "mcp-allowed.json"));

    // Broken JSON: one warning, nothing used, never a config error.
    const broken = parseProjectMcp(file, "{nope", env);
    expect(broken.servers).toEqual({});
    expect(broken.warnings[0]).toContain("is not valid JSON");
  });

  it("is found from the working directory up to the repository root, not above it", () => {
    const top = tmp("warren-mcpfind-");
    const repo = path.join(top, "repo");
    const sub = path.join(repo, "a", "b");
    mkdirSync(sub, { recursive: true });
    mkdirSync(path.join(repo, ".git"));
    writeFileSync(path.join(top, ".mcp.json"), "{}");
    expect(findProjectMcpFile(sub)).toBeUndefined();
    writeFileSync(path.join(repo, ".mcp.json"), "{}");
    expect(findProjectMcpFile(sub)).toBe(path.join(repo, ".mcp.json"));
    writeFileSync(path.join(sub, ".mcp.json"), "{}");
    expect(findProjectMcpFile(sub)).toBe(path.join(sub, ".mcp.json"));
  });

  it("is allowed per path and content; a changed file waits again; the config wins a clash", () => {
    const dir = tmp("warren-mcpallow-");
    const home = path.join(dir, "home");
    const env = {
      HOME: dir,
      WARREN_HOME: home,
      WARREN_CONFIG: path.join(dir, "config.json"),
    };
    writeFileSync(
      env.WARREN_CONFIG,
      JSON.stringify({ mcp_servers: { shared: { command: "mine" } } }),
    );
    const file = path.join(dir, ".mcp.json");
    const write = (arg: string) =>
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: { srv: { command: "node", args: [arg] }, shared: { command: "theirs" } },
        }),
      );
    write("one");
    let config = loadConfig(env, dir);
    expect(config.mcpServers.shared).toMatchObject({ command: "mine" });
    expect(config.mcpServers.shared!.allow).toBeUndefined();
    expect(config.mcpServers.srv!.allow?.file).toBe(path.join(dir, ".mcp.json"));
    expect(isAllowed(config.projectMcp!.allow)).toBe(false);
    expect(projectMcpWaiting(config.projectMcp)).toContain("its 1 MCP server (srv)");

    rememberAllow(config.projectMcp!.allow);
    expect(isAllowed(loadConfig(env, dir).projectMcp!.allow)).toBe(true);
    expect(projectMcpWaiting(loadConfig(env, dir).projectMcp)).toBeUndefined();
    // Stored in warren's home, not in the project.
    expect(existsSync(path.join(home, "mcp-allowed.json"))).toBe(true);
    expect(readFileSync(path.join(home, "mcp-allowed.json"), "utf8")).toContain(file);

    write("two");
    config = loadConfig(env, dir);
    expect(isAllowed(config.projectMcp!.allow)).toBe(false);
    // Back to the content that was allowed: that content is what the entry holds.
    write("one");
    expect(isAllowed(loadConfig(env, dir).projectMcp!.allow)).toBe(true);
  });

  it("parses /mcp allow", () => {
    expect(parseCommand("/mcp allow")).toEqual({ ok: true, command: { name: "mcp", allow: true } });
    expect(parseCommand("/mcp nope")).toMatchObject({ ok: false });
  });

  describe("end to end", () => {
    const dir = tmp("warren-mcpproj-");
    const work = path.join(dir, "clone");
    mkdirSync(path.join(work, ".git"), { recursive: true });
    // In the server's working directory: the one place its sandbox lets it write.
    const mark = path.join(work, "started");
    const project = (extra: string[] = []) =>
      writeFileSync(
        path.join(work, ".mcp.json"),
        JSON.stringify({
          mcpServers: {
            proj: {
              command: process.execPath,
              args: [FAULTS, ...extra],
              env: { MARK_FILE: mark },
            },
          },
        }),
      );
    // One warren home for every run (e2e's env makes a fresh one per run otherwise).
    const env = { WARREN_HOME: path.join(dir, "warren-home"), WARREN_APPROVE: "all" };
    const script = () =>
      e2e.fake().script([
        {
          agent: "root",
          match: isFirst,
          reply: { toolCalls: [{ name: "mcp__proj__ok", arguments: {} }] },
        },
        { agent: "root", match: after("mcp__proj__ok"), reply: { text: "called" } },
      ]);

    /** Runs -p calling mcp__proj__ok; the tools offered and the call's result. */
    async function callIt() {
      script();
      const run = await e2e.prompt("call it", { env, cwd: work, timeout: 60 });
      expect(run.json?.text, run.stderr).toBe("called");
      const [first, second] = requestsOf(e2e.fake(), "root");
      return { run, offered: first!.tools, result: lastToolResults(second!)[0]!.value };
    }

    it("a cloned repository's .mcp.json starts nothing before it is allowed", async () => {
      project();
      const listed = await e2e.warren(["mcp", "list"], env, work);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^proj {2}stdio .* — not allowed \(from .*\.mcp\.json; /m);
      const { run, offered, result } = await callIt();
      expect(run.stderr).toContain(".mcp.json waiting: its 1 MCP server (proj)");
      expect(offered.some((t) => t.startsWith("mcp__"))).toBe(false);
      expect(result).toMatchObject({ error: { code: "INVALID_ARGS" } });
      // The server's command never ran.
      expect(existsSync(mark)).toBe(false);
    }, 120_000);

    it("`warren mcp allow` shows the servers, allows the file, and they start", async () => {
      const allowed = await e2e.warren(["mcp", "allow"], env, work);
      expect(allowed.stderr).toBe("");
      expect(allowed.code).toBe(0);
      expect(allowed.stdout).toContain("allowing ");
      expect(allowed.stdout).toMatch(/^ {2}proj {2}stdio .*fault-server\.mjs/m);
      expect(allowed.stdout).toContain("  mcp__proj__ok");
      expect(existsSync(mark)).toBe(true);
      const { run, offered, result } = await callIt();
      // The fault server's bad tools are its only lines (no "waiting" line any more).
      expect(run.stderr).not.toContain("waiting");
      expect(offered).toContain("mcp__proj__ok");
      expect(String((result as { output?: string }).output)).toMatch(/^pid \d+$/);
    }, 120_000);

    it("a changed .mcp.json is not allowed again until it is allowed again", async () => {
      project(["--changed"]);
      rmSync(mark, { force: true });
      const listed = await e2e.warren(["mcp", "list"], env, work);
      expect(listed.stdout).toContain("not allowed");
      const { offered, result } = await callIt();
      expect(offered.some((t) => t.startsWith("mcp__"))).toBe(false);
      expect(result).toMatchObject({ error: { code: "INVALID_ARGS" } });
      expect(existsSync(mark)).toBe(false);
      const again = await e2e.warren(["mcp", "allow"], env, work);
      expect(again.code).toBe(0);
      expect(existsSync(mark)).toBe(true);
    }, 120_000);
  });
});

describe("/mcp allow in the TUI", () => {
  it("lists the waiting servers as not allowed, then allows the file and fetches their tools", async () => {
    const dir = tmp("warren-mcptui-");
    const work = path.join(dir, "clone");
    mkdirSync(path.join(work, ".git"), { recursive: true });
    // In the server's working directory: the one place its sandbox lets it write.
    const mark = path.join(work, "started");
    writeFileSync(
      path.join(work, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          proj: { command: process.execPath, args: [FAULTS], env: { MARK_FILE: mark } },
        },
      }),
    );
    const env = {
      HOME: dir,
      WARREN_HOME: path.join(dir, "home"),
      WARREN_CONFIG: path.join(dir, "none.json"),
    };
    const config = loadConfig(env, work);
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
    });
    const notices = () =>
      controller
        .entries()
        .flatMap((e) => (e.kind === "notice" ? [e.text] : []))
        .join("\n");
    try {
      await actions.submit("/mcp");
      expect(notices()).toMatch(/^proj {2}stdio .* — not allowed/m);
      expect(existsSync(mark)).toBe(false);
      await actions.submit("/mcp allow");
      expect(notices()).toContain(
        `allowed ${path.join(work, ".mcp.json")}; its servers may start:`,
      );
      expect(notices()).toContain("  mcp__proj__ok");
      expect(isAllowed(config.projectMcp!.allow)).toBe(true);
      expect(existsSync(mark)).toBe(true);
      await actions.submit("/mcp allow");
      expect(notices()).toContain("is allowed already");
    } finally {
      controller.close();
      await closeMcpConnections();
    }
  }, 60_000);
});
