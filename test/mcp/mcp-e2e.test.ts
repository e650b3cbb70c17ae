// MCP servers end to end through `bin/warren -p`, the real runtime and the fake model, against
// real servers: @modelcontextprotocol/server-everything over stdio, and a small fault server on
// the official SDK (fixtures/fault-server.mjs) for a server that dies, hangs or lists bad tools.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const EVERYTHING = path.join(
  root,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
const MEMORY = path.join(root, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const FILESYSTEM = path.join(
  root,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);
const FAULTS = path.join(root, "test/mcp/fixtures/fault-server.mjs");

/**
 * Outside /tmp: a server runs in the sandbox (mcp/stdio.ts), whose /tmp is private, so a path
 * under the host's /tmp would be out of its sight.
 */
function scratch(prefix: string): string {
  return mkdtempSync(path.join("/var/tmp", prefix));
}

function writeConfig(config: object): Record<string, string> {
  const dir = scratch("warren-mcp-");
  const file = path.join(dir, "config.json");
  writeFileSync(file, JSON.stringify(config));
  return { WARREN_CONFIG: file };
}

function output(value: unknown): string {
  return String((value as { output?: unknown }).output ?? "");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe("MCP servers", () => {
  it("calls a real server over streamable HTTP", async () => {
    const port = await freePort();
    const server = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
      env: { PATH: process.env.PATH, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let text = "";
        server.stderr.on("data", (chunk: Buffer) => {
          text += String(chunk);
          if (text.includes("listening")) resolve();
        });
        server.once("exit", (code) => reject(new Error(`server exited (${code}): ${text}`)));
      });
      const env = writeConfig({
        mcp_servers: { web: { url: `http://127.0.0.1:${port}/mcp` } },
        policy: { "mcp__web__*": "allow" },
      });
      const listed = await e2e.warren(["mcp", "list"], env);
      expect(listed.stdout).toMatch(
        /^web {2}http {2}http:\/\/127\.0\.0\.1:\d+\/mcp {2}— \d+ tools$/m,
      );
      const fake = e2e.fake();
      fake.script([
        {
          agent: "root",
          match: isFirst,
          reply: {
            toolCalls: [{ name: "mcp__web__get-sum", arguments: { a: 20, b: 22 } }],
          },
        },
        { agent: "root", match: after("mcp__web__get-sum"), reply: { text: "summed" } },
      ]);
      const run = await e2e.prompt("add", { env, timeout: 60 });
      expect(run.stderr).toBe("");
      expect(run.json?.text).toBe("summed");
      const [, second] = requestsOf(fake, "root");
      expect(output(lastToolResults(second!)[0]!.value)).toContain("42");
    } finally {
      server.kill();
    }
  }, 120_000);

  it("offers a real server's tools to the root and, narrowed by a profile, to a child", async () => {
    const env = writeConfig({
      mcp_servers: {
        everything: {
          command: process.execPath,
          args: [EVERYTHING, "stdio"],
          env: { MCP_TEST_MARK: "marked" },
        },
      },
      policy: { "mcp__everything__*": "allow" },
      profiles: { echoer: { tools: ["mcp__everything__*echo"] } },
    });
    const listed = await e2e.warren(["mcp", "list"], env);
    expect(listed.stderr).toBe("");
    expect(listed.stdout).toMatch(/^everything {2}stdio .* — \d+ tools$/m);
    expect(listed.stdout).toContain("  mcp__everything__echo\n");

    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "mcp__everything__echo", arguments: { message: "hello mcp" } },
            { name: "mcp__everything__get-env", arguments: {} },
          ],
        },
      },
      {
        agent: "root",
        match: after("mcp__everything__get-env"),
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "kid", prompt: "echo", profile: "echoer" } },
          ],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: ["kid"] } }] },
      },
      { agent: "root", match: after("wait"), reply: { text: "done" } },
      {
        agent: "kid",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "mcp__everything__echo", arguments: { message: "from kid" } },
            { name: "mcp__everything__get-sum", arguments: { a: 1, b: 2 } },
          ],
        },
      },
      { agent: "kid", match: after("mcp__everything__get-sum"), reply: { text: "kid done" } },
    ]);
    const run = await e2e.prompt("use the server", { env, timeout: 90 });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("done");

    const [first, second] = requestsOf(fake, "root");
    const offered = first!.tools;
    expect(offered).toContain("mcp__everything__echo");
    expect(offered).toEqual([...offered].sort((a, b) => a.localeCompare(b)));
    const [echo, envResult] = lastToolResults(second!);
    expect(output(echo!.value)).toContain("hello mcp");
    // The server's environment: its own `env` and the allowlist, never warren's.
    const seen = output(envResult!.value);
    expect(seen).toContain("MCP_TEST_MARK");
    expect(seen).not.toContain("DATABASE_URL");
    expect(seen).not.toContain("OPENAI_BASE_URL");
    expect(seen).not.toContain("WARREN_CONFIG");

    const [kidFirst, kidSecond] = requestsOf(fake, "kid");
    expect(kidFirst!.tools).toEqual(["mcp__everything__echo", "send", "wait"]);
    const [kidEcho, kidSum] = lastToolResults(kidSecond!);
    expect(output(kidEcho!.value)).toContain("from kid");
    expect(kidSum!.value).toMatchObject({ error: { code: "INVALID_ARGS" } });
  }, 120_000);

  it("stores and finds an entity with server-memory over stdio", async () => {
    const memoryDir = scratch("warren-mcp-mem-");
    const memoryFile = path.join(memoryDir, "m.jsonl");
    const env = writeConfig({
      mcp_servers: {
        memory: {
          command: process.execPath,
          args: [MEMORY],
          env: { MEMORY_FILE_PATH: memoryFile },
          // Its working directory: the one place its sandbox lets it write its file.
          cwd: memoryDir,
        },
      },
      policy: { "mcp__memory__*": "allow" },
    });
    expect((await e2e.warren(["mcp", "list"], env)).stdout).toContain("mcp__memory__read_graph");
    const fake = e2e.fake();
    const entity = { name: "warren", entityType: "project", observations: ["runs agents"] };
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "mcp__memory__create_entities", arguments: { entities: [entity] } }],
        },
      },
      {
        agent: "root",
        match: after("mcp__memory__create_entities"),
        reply: {
          toolCalls: [{ name: "mcp__memory__search_nodes", arguments: { query: "warren" } }],
        },
      },
      { agent: "root", match: after("mcp__memory__search_nodes"), reply: { text: "remembered" } },
    ]);
    const run = await e2e.prompt("remember", { env, timeout: 60 });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("remembered");
    const [, , third] = requestsOf(fake, "root");
    expect(output(lastToolResults(third!)[0]!.value)).toContain("runs agents");
  }, 120_000);

  it("lists and reads a file in an allowed directory with server-filesystem, and is refused outside it", async () => {
    const allowed = scratch("warren-mcp-fs-");
    const outside = scratch("warren-mcp-fs-out-");
    writeFileSync(path.join(allowed, "note.txt"), "the note's text\n");
    writeFileSync(path.join(outside, "secret.txt"), "not for the model\n");
    const env = writeConfig({
      mcp_servers: { fs: { command: process.execPath, args: [FILESYSTEM, allowed] } },
      policy: { "mcp__fs__*": "allow" },
    });
    const listed = await e2e.warren(["mcp", "list"], env);
    expect(listed.stdout).toContain("  mcp__fs__read_text_file\n");
    expect(listed.stdout).toContain("  mcp__fs__list_directory\n");
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "mcp__fs__list_directory", arguments: { path: allowed } },
            {
              name: "mcp__fs__read_text_file",
              arguments: { path: path.join(allowed, "note.txt") },
            },
            {
              name: "mcp__fs__read_text_file",
              arguments: { path: path.join(outside, "secret.txt") },
            },
          ],
        },
      },
      { agent: "root", match: after("mcp__fs__read_text_file"), reply: { text: "read" } },
    ]);
    const run = await e2e.prompt("read the note", { env, timeout: 60 });
    expect(run.json?.text, run.stderr).toBe("read");
    const [, second] = requestsOf(fake, "root");
    const [list, read, refused] = lastToolResults(second!);
    expect(output(list!.value)).toContain("[FILE] note.txt");
    expect(output(read!.value)).toContain("the note's text");
    // The server's own boundary: a path outside its directories is a tool error, not the text.
    expect(JSON.stringify(refused!.value)).toContain("error");
    expect(JSON.stringify(refused!.value)).not.toContain("not for the model");
  }, 120_000);

  it("survives a server that dies mid-call (restarted on the next), caps a huge result, skips bad tools", async () => {
    const env = writeConfig({
      // Unconfined: in its sandbox's own PID namespace every start would answer the same pid.
      mcp_servers: { fx: { command: process.execPath, args: [FAULTS], sandbox: false } },
      policy: { "mcp__*": "allow" },
    });
    const listed = await e2e.warren(["mcp", "list"], env);
    expect(listed.stdout).toContain("fx  stdio");
    expect(listed.stdout).toContain("mcp__fx__crash");
    expect(listed.stdout).not.toContain("bad name");

    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "mcp__fx__ok", arguments: {} }] },
      },
      {
        agent: "root",
        match: after("mcp__fx__ok"),
        reply: { toolCalls: [{ name: "mcp__fx__crash", arguments: {} }] },
      },
      {
        agent: "root",
        match: after("mcp__fx__crash"),
        reply: {
          toolCalls: [
            { name: "mcp__fx__huge", arguments: {} },
            { name: "mcp__fx__ok", arguments: {} },
          ],
        },
      },
      { agent: "root", match: after("mcp__fx__ok"), reply: { text: "still here" } },
    ]);
    const run = await e2e.prompt("break it", { env, timeout: 90 });
    expect(run.json?.text, run.stderr).toBe("still here");
    // One warning line each: the bad schema, the bad name, the death.
    expect(run.stderr.trim().split("\n").sort()).toEqual([
      'warren: MCP server "fx" stopped during a call; it is restarted on the next',
      'warren: MCP tool "mcp__fx__bad name!" skipped: its name is not one a model can call',
      'warren: MCP tool mcp__fx__bad_schema: malformed input schema, offered as {"type":"object"}',
    ]);

    const [first, second, third, fourth] = requestsOf(fake, "root");
    expect(first!.tools).toContain("mcp__fx__bad_schema");
    expect(first!.tools.some((t) => t.includes("bad name"))).toBe(false);
    const badSchema = (first!.body.tools as { function: { name: string; parameters: unknown } }[])
      .map((t) => t.function)
      .find((f) => f.name === "mcp__fx__bad_schema");
    expect(badSchema?.parameters).toEqual({ type: "object" });

    const firstPid = output(lastToolResults(second!)[0]!.value);
    expect(firstPid).toMatch(/^pid \d+$/);
    const crashed = lastToolResults(third!)[0]!.value as { error: { message: string } };
    expect(crashed.error.message).toContain('MCP server "fx" stopped during the call');
    const [huge, again] = lastToolResults(fourth!);
    const hugeText = output(huge!.value);
    expect(hugeText.length).toBeLessThanOrEqual(30_000);
    expect(hugeText.endsWith("END")).toBe(true);
    expect(huge!.value).toMatchObject({ truncated: true });
    // Restarted: a new process answers.
    expect(output(again!.value)).toMatch(/^pid \d+$/);
    expect(output(again!.value)).not.toBe(firstPid);
  }, 120_000);

  it("answers a server that never starts with a startup timeout error, and the turn goes on", async () => {
    const hang = path.join(scratch("warren-mcp-hang-"), "hang");
    const server = (startup: number) => ({
      mcp_servers: {
        fx: {
          command: process.execPath,
          args: [FAULTS],
          env: { HANG_FILE: hang },
          startup_timeout_seconds: startup,
        },
      },
      policy: { "mcp__*": "allow" },
    });
    // Its list is fetched while it still answers (with time to spare on a loaded machine; the
    // timeouts are not part of the server's identity, so the stored list stays its own).
    const env = writeConfig(server(30));
    expect((await e2e.warren(["mcp", "list"], env)).stdout).toContain("mcp__fx__ok");
    writeFileSync(env.WARREN_CONFIG!, JSON.stringify(server(2)));
    // From now on it never answers.
    writeFileSync(hang, "");
    expect(existsSync(hang)).toBe(true);

    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "mcp__fx__ok", arguments: {} }] },
      },
      { agent: "root", match: after("mcp__fx__ok"), reply: { text: "went on" } },
    ]);
    const started = Date.now();
    const run = await e2e.prompt("call it", { env, timeout: 60 });
    expect(run.json?.text).toBe("went on");
    expect(Date.now() - started).toBeLessThan(30_000);
    const [, second] = requestsOf(fake, "root");
    const result = lastToolResults(second!)[0]!.value as { error: { message: string } };
    expect(result.error.message).toContain(
      'MCP server "fx" could not start: did not start within 2 s',
    );
    // `warren mcp list` says so too.
    const listed = await e2e.warren(["mcp", "list"], env);
    expect(listed.stdout).toContain("failed: ");
  }, 120_000);
});
