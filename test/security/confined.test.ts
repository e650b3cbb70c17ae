// Hooks and MCP stdio servers run in the sandbox (issue 37, item 2): a hook or a server that tries
// to write outside its working directory or read warren's environment through /proc fails there;
// `"sandbox": false` in the person's config runs it unconfined as before; the same in a project's
// `.mcp.json` is ignored. The MCP cases run through the real `bin/warren -p` (npm run build first).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { loadConfig } from "../../src/config/config.js";
import { preToolUse } from "../../src/runtime/hook-calls.js";
import { probeBwrap } from "../../src/sandbox/launch.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";
import { makeFixture, type Fixture } from "./fixture.js";

const e2e = useE2E();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PROBE = path.join(root, "test/mcp/fixtures/probe-server.mjs");
const hasBwrap = (await probeBwrap("bwrap")).ok;

/** Outside /tmp: the sandbox's private /tmp would hide these paths by accident. */
function scratch(prefix: string): string {
  return mkdtempSync(path.join("/var/tmp", prefix));
}

describe.skipIf(!hasBwrap)("a hook runs in the sandbox unless the person's config says not", () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeFixture();
  });
  afterEach(() => fx.cleanup());

  /**
   * Runs a PreToolUse hook that writes outside and reads its parent's environment (this test
   * process's, whose environment names VITEST_ variables, when it runs unconfined).
   */
  async function probe(sandbox: boolean | undefined) {
    const target = path.join(fx.outside, "hook-escaped");
    const command =
      `echo x > ${target}; ` +
      `tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^VITEST_' > environ.txt; exit 0`;
    writeFileSync(
      fx.configFile,
      JSON.stringify({
        sandbox: "on",
        hooks: {
          PreToolUse: [
            {
              matcher: "",
              hooks: [{ type: "command", command, ...(sandbox !== undefined && { sandbox }) }],
            },
          ],
        },
      }),
    );
    const config = loadConfig({ ...process.env }, fx.cwd);
    const db = e2e.db();
    const agent = await createTree(db, { cwd: fx.cwd });
    await preToolUse(
      { db, config, agent, signal: new AbortController().signal },
      { id: "call_1", name: "bash", arguments: '{"command":"ls"}' },
      { command: "ls" },
      "allow",
    );
    const environ = readFileSync(path.join(fx.cwd, "environ.txt"), "utf8").trim();
    return { wrote: existsSync(target), environ: environ !== "0" };
  }

  it("sandboxed by default: no write outside, no view of warren's environment", async () => {
    expect(await probe(undefined)).toEqual({ wrote: false, environ: false });
    expect(await probe(true)).toEqual({ wrote: false, environ: false });
  });

  it('"sandbox": false in the person\'s config runs it unconfined', async () => {
    expect(await probe(false)).toEqual({ wrote: true, environ: true });
  });
});

describe.skipIf(!hasBwrap)("an MCP stdio server runs in the sandbox", () => {
  /** Lists the server's tools, has the model call `probe`, and returns what the probe reported. */
  async function probeThrough(
    name: string,
    env: Record<string, string>,
    cwd: string,
  ): Promise<{ wrote: boolean; environ: boolean }> {
    const listed = await e2e.warren(["mcp", "list"], env, cwd);
    expect(listed.stdout, listed.stderr).toContain(`mcp__${name}__probe`);
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: `mcp__${name}__probe`, arguments: {} }] },
      },
      { agent: "root", match: after(`mcp__${name}__probe`), reply: { text: "probed" } },
    ]);
    const run = await e2e.prompt("probe", { env: { ...env, WARREN_APPROVE: "all" }, cwd });
    expect(run.json?.text, run.stderr).toBe("probed");
    // The last request of this run (one test's runs share the fake model).
    const last = requestsOf(e2e.fake(), "root").at(-1)!;
    const text = JSON.stringify(lastToolResults(last)[0]!.value);
    const found = /\{\\"wrote\\":(true|false),\\"environ\\":(true|false)\}/.exec(text);
    expect(found, text).not.toBeNull();
    return { wrote: found![1] === "true", environ: found![2] === "true" };
  }

  function configured(dir: string, sandbox: boolean | undefined) {
    const work = path.join(dir, "work");
    mkdirSync(work, { recursive: true });
    const outside = path.join(dir, "escaped");
    const file = path.join(dir, "config.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcp_servers: {
          pr: {
            command: process.execPath,
            args: [PROBE],
            env: { OUTSIDE_FILE: outside },
            cwd: work,
            ...(sandbox !== undefined && { sandbox }),
          },
        },
        policy: { "mcp__*": "allow" },
      }),
    );
    return { work, outside, env: { WARREN_CONFIG: file } };
  }

  it('from the person\'s config: confined by default, unconfined with "sandbox": false', async () => {
    const dir = scratch("warren-confined-");
    const boxed = configured(dir, undefined);
    expect(await probeThrough("pr", boxed.env, boxed.work)).toEqual({
      wrote: false,
      environ: false,
    });
    expect(existsSync(boxed.outside)).toBe(false);

    const free = configured(dir, false);
    expect(await probeThrough("pr", free.env, free.work)).toEqual({
      wrote: true,
      environ: true,
    });
    expect(existsSync(free.outside)).toBe(true);
  }, 120_000);

  it('"sandbox": false in a project\'s .mcp.json is ignored', async () => {
    const dir = scratch("warren-confined-");
    const clone = path.join(dir, "clone");
    mkdirSync(path.join(clone, ".git"), { recursive: true });
    const outside = path.join(dir, "escaped");
    writeFileSync(
      path.join(clone, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          proj: {
            command: process.execPath,
            args: [PROBE],
            env: { OUTSIDE_FILE: outside },
            sandbox: false,
          },
        },
      }),
    );
    const env = {
      WARREN_CONFIG: path.join(dir, "none.json"),
      WARREN_HOME: path.join(dir, "home"),
    };
    const allowed = await e2e.warren(["mcp", "allow"], env, clone);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(await probeThrough("proj", env, clone)).toEqual({ wrote: false, environ: false });
    expect(existsSync(outside)).toBe(false);
  }, 120_000);
});
