// MCP on the first run (SPEC §9): a server whose tool list was never fetched is waited for before
// the first model request (one line on stderr says so), so the first `warren -p` after adding a
// server already offers its tools; `${VAR}` / `${VAR:-default}` expand in `.mcp.json`; and the
// servers of the person's `~/.claude.json` and `~/.codex/config.toml` are read like warren's own.
// End to end through `bin/warren` (needs `npm run build`) with @modelcontextprotocol/server-everything.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { expandVars } from "../../src/mcp/expand.js";
import { loadPersonMcp } from "../../src/mcp/person.js";
import { parseProjectMcp } from "../../src/mcp/project.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const EVERYTHING = path.join(
  root,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

/** Outside /tmp (the sandbox's /tmp is private) and outside this repository (not agent-writable). */
function scratch(prefix: string): string {
  return mkdtempSync(path.join("/var/tmp", prefix));
}

const output = (value: unknown) => String((value as { output?: unknown }).output ?? "");

/** The root asks the server's get-env tool once, then answers "done". */
function scriptGetEnv(server: string): void {
  e2e.fake().script([
    {
      agent: "root",
      match: isFirst,
      reply: { toolCalls: [{ name: `mcp__${server}__get-env`, arguments: {} }] },
    },
    { agent: "root", match: after(`mcp__${server}__get-env`), reply: { text: "done" } },
  ]);
}

describe("the first run after adding a server", () => {
  it("offers its tools in the first request, saying once that it waits; the second run does not wait", async () => {
    const work = scratch("warren-mcp-first-");
    // Slow to start (3 s), as a server fetched by npx is: without the wait, the first request
    // would go out before its list is stored.
    const slow = 'sleep 3; exec "$0" "$1" stdio';
    const config = {
      mcp_servers: {
        everything: { command: "/bin/sh", args: ["-c", slow, process.execPath, EVERYTHING] },
      },
      policy: { "mcp__everything__*": "allow" },
    };
    scriptGetEnv("everything");
    const first = await e2e.prompt("go", { config, cwd: work, timeout: 90 });
    expect(first.json?.text).toBe("done");
    expect(first.stderr).toBe(
      "warren: waiting for MCP server everything to list its tools (first start, up to 30 s)\n",
    );
    const [request] = requestsOf(e2e.fake(), "root");
    expect(request!.tools).toContain("mcp__everything__echo");
    expect(request!.tools).toContain("mcp__everything__get-env");

    scriptGetEnv("everything");
    const second = await e2e.prompt("go", { config, cwd: work, timeout: 90 });
    expect(second.stderr).toBe("");
    expect(second.json?.text).toBe("done");
  }, 180_000);
});

describe("${VAR} in .mcp.json", () => {
  it("expands in env and args; a default stands in for an unset variable", () => {
    expect(expandVars("a ${X} b ${Y:-dflt} ${Z:-}", { X: "1" })).toEqual({
      text: "a 1 b dflt ",
      missing: [],
    });
    expect(expandVars("${NOPE}/x ${NOPE}", {})).toEqual({ text: "/x ", missing: ["NOPE"] });
  });

  it("a variable unset and without a default: that server is not used, one line naming it", () => {
    const dir = scratch("warren-mcp-var-");
    const file = path.join(dir, ".mcp.json");
    const content = JSON.stringify({
      mcpServers: {
        bad: { command: "node", args: ["s.js"], env: { TOKEN: "${MISSING_TOKEN_X}" } },
        good: { url: "${BASE_X:-http://127.0.0.1:9}/mcp", headers: { A: "Bearer ${KEY_X}" } },
      },
    });
    writeFileSync(file, content);
    const project = parseProjectMcp(file, content, {
      WARREN_HOME: path.join(dir, "home"),
      KEY_X: "k1",
    });
    expect(Object.keys(project.servers)).toEqual(["good"]);
    expect(project.servers.good).toMatchObject({
      url: "http://127.0.0.1:9/mcp",
      headers: { A: "Bearer k1" },
    });
    expect(project.warnings).toEqual([
      `${project.file}: mcpServers.bad uses \${MISSING_TOKEN_X}, which is not set in warren's environment and has no default (\${VAR:-default}) (that server is not used)`,
    ]);
  });

  it("end to end: the allowed server gets the values, not the text", async () => {
    const work = scratch("warren-mcp-expand-");
    writeFileSync(
      path.join(work, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          ev: {
            command: "${NODE_BIN_X}",
            args: [EVERYTHING, "stdio"],
            env: { TOKEN_SEEN: "${MY_TOKEN_X}", OTHER_SEEN: "${UNSET_X:-fallback-value}" },
          },
        },
      }),
    );
    // One warren home for both runs (e2e's env makes a fresh one per run otherwise).
    const env = {
      MY_TOKEN_X: "secret-123",
      NODE_BIN_X: process.execPath,
      WARREN_HOME: path.join(work, "warren-home"),
    };
    const allowed = await e2e.warren(["mcp", "allow"], env, work);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout, allowed.stderr).toContain("mcp__ev__get-env");
    scriptGetEnv("ev");
    const run = await e2e.prompt("go", {
      env,
      cwd: work,
      config: { policy: { "mcp__ev__*": "allow" } },
      timeout: 90,
    });
    expect(run.json?.text).toBe("done");
    const [, second] = requestsOf(e2e.fake(), "root");
    const result = lastToolResults(second!)[0]!.value;
    const seen = output(result) || JSON.stringify(result);
    expect(seen, run.stderr).toContain("secret-123");
    expect(seen).toContain("fallback-value");
    expect(seen).not.toContain("${MY_TOKEN_X}");
  }, 180_000);
});

describe("the person's Claude Code and Codex servers", () => {
  function home(): string {
    const dir = scratch("warren-mcp-home-");
    mkdirSync(path.join(dir, ".codex"));
    return dir;
  }

  it("reads ~/.claude.json (user and this project's entry) and ~/.codex/config.toml; warren's own win", () => {
    const h = home();
    const work = scratch("warren-mcp-proj-");
    writeFileSync(
      path.join(h, ".claude.json"),
      JSON.stringify({
        mcpServers: {
          cuser: { type: "stdio", command: "node", args: ["u.js"], env: { K: "${HOME_VAR_X}" } },
          shared: { command: "node", args: ["claude-shared.js"] },
          mine: { command: "node", args: ["claude-mine.js"] },
        },
        projects: {
          [work]: { mcpServers: { cproj: { type: "http", url: "http://127.0.0.1:1/m" } } },
        },
      }),
    );
    writeFileSync(
      path.join(h, ".codex", "config.toml"),
      [
        "[mcp_servers.codexy]",
        'command = "node"',
        'args = ["c.js"]',
        "startup_timeout_sec = 7",
        "",
        "[mcp_servers.shared]",
        'command = "node"',
        'args = ["codex-shared.js"]',
        "",
        "[mcp_servers.off]",
        'command = "node"',
        "enabled = false",
      ].join("\n"),
    );
    const configFile = path.join(h, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({ mcp_servers: { mine: { command: "node", args: ["warren-own.js"] } } }),
      { mode: 0o600 },
    );
    const config = loadConfig({ HOME: h, WARREN_CONFIG: configFile, HOME_VAR_X: "v" }, work);
    const names = Object.keys(config.mcpServers).sort();
    expect(names).toEqual(["codexy", "cproj", "cuser", "mine", "shared"]);
    expect(config.mcpServers.mine).toMatchObject({ args: ["warren-own.js"] });
    expect(config.mcpServers.shared).toMatchObject({ args: ["claude-shared.js"] });
    expect(config.mcpServers.cuser).toMatchObject({ env: { K: "v" } });
    expect(config.mcpServers.codexy).toMatchObject({ startupTimeoutMs: 7000 });
    expect(config.mcpServers.cuser!.allow).toBeUndefined(); // the person's own: no allow asked
    expect(config.mcpFiles).toEqual([
      path.join(h, ".claude.json"),
      path.join(h, ".codex", "config.toml"),
    ]);
    expect(config.warnings).toContain(
      `${path.join(h, ".claude.json")}: mcpServers.mine: not used, warren's config has a server of that name`,
    );
    expect(config.warnings).toContain(
      `${path.join(h, ".codex", "config.toml")}: mcp_servers.shared: not used, ${path.join(h, ".claude.json")}: mcpServers has a server of that name`,
    );
  });

  it("maps Codex's env_vars and env_http_headers (a variable that is not set is left out)", () => {
    const h = home();
    writeFileSync(
      path.join(h, ".codex", "config.toml"),
      [
        "[mcp_servers.local]",
        'command = "node"',
        'env_vars = ["PASS_A", "PASS_UNSET", "PASS_LIT"]',
        'env = { OWN = "1", PASS_A = "the entry wins" }',
        "",
        "[mcp_servers.remote]",
        'url = "http://127.0.0.1:1/m"',
        'http_headers = { "X-Static" = "s" }',
        'env_http_headers = { "X-Key" = "KEY_VAR", "X-None" = "UNSET_VAR" }',
        "",
        "[mcp_servers.bad]",
        'command = "node"',
        "env_vars = [1]",
      ].join("\n"),
    );
    const env = { HOME: h, PASS_A: "a", KEY_VAR: "k-123", PASS_LIT: "$" + "{KEY_VAR}" };
    const person = loadPersonMcp(scratch("warren-mcp-codex-keys-"), env);
    expect(person.servers.local).toMatchObject({ env: { OWN: "1", PASS_A: "the entry wins" } });
    // A value passed on is taken as it is, never expanded again.
    expect(person.servers.local).toMatchObject({ env: { PASS_LIT: "$" + "{KEY_VAR}" } });
    expect(person.servers.remote).toMatchObject({ headers: { "X-Static": "s", "X-Key": "k-123" } });
    expect((person.servers.remote as { headers: object }).headers).not.toHaveProperty("X-None");
    expect(person.servers.bad).toBeUndefined();
    expect(person.warnings.join("\n")).toContain(
      "mcp_servers.bad: env_vars must be a list of environment variable names",
    );
  });

  it("end to end: a server from ~/.claude.json is offered on the first run", async () => {
    const h = home();
    const work = scratch("warren-mcp-claude-");
    writeFileSync(
      path.join(h, ".claude.json"),
      JSON.stringify({
        mcpServers: { fromclaude: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
      }),
    );
    scriptGetEnv("fromclaude");
    const run = await e2e.prompt("go", {
      env: { HOME: h },
      cwd: work,
      config: { policy: { "mcp__fromclaude__*": "allow" } },
      timeout: 90,
    });
    expect(run.json?.text).toBe("done");
    const [first] = requestsOf(e2e.fake(), "root");
    expect(first!.tools).toContain("mcp__fromclaude__get-env");
  }, 180_000);
});
