// Hooks end to end through `bin/warren -p` with the fake model and real hook scripts (SPEC §9): a
// PreToolUse that blocks `bash` (exit 2) or denies it (JSON), one whose `allow` cannot skip an
// approval, a PostToolUse that sees the call and talks back, Stop and SubagentStop, and hooks that
// time out or fail: one line each, and the run goes on.
import {
  chmodSync,
  readdirSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  after,
  agentNamed,
  eventsOf,
  forkedIds,
  isFirst,
  lastToolResults,
  requestsOf,
  useE2E,
} from "../runtime/e2e-support.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { until as untilWithin } from "../support/until.js";
import type { Reply } from "../support/fake-model.js";
import { sql } from "drizzle-orm";

/** A hook's effects come through a real warren process: give them 30 s under load. */
const until = <T>(what: string, probe: () => T | undefined | Promise<T | undefined>) =>
  untilWithin(what, probe, 30_000, 100);

const e2e = useE2E();

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(os.tmpdir(), "warren-hooks-e2e-"));
  mkdirSync(path.join(work, ".claude", "hooks"), { recursive: true });
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/**
 * A hook script in the working directory's `.claude/hooks/` (read-only to agents, so warren runs
 * it; anywhere else in the working directory it would be refused); returns its path.
 */
function hookScript(name: string, body: string): string {
  const file = path.join(work, ".claude", "hooks", name);
  writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const group = (command: string, matcher = "", timeout?: number) => ({
  matcher,
  hooks: [{ type: "command", command, ...(timeout ? { timeout } : {}) }],
});

/** The root calls bash once with `command`, then answers "done". */
function bashOnce(command: string): void {
  e2e.fake().script([
    {
      agent: "root",
      match: isFirst,
      reply: { toolCalls: [{ name: "bash", arguments: { command } }] },
    },
    { agent: "root", match: after("bash"), reply: { text: "done" } },
  ]);
}

/** What the model read as the bash call's result. */
function bashResult(): unknown {
  const last = requestsOf(e2e.fake(), "root").at(-1)!;
  return lastToolResults(last).find((r) => r.name === "bash")?.value;
}

const jsonLines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("PreToolUse", () => {
  it("exit 2 blocks the call: the model reads the hook's stderr and the command never ran", async () => {
    const hook = hookScript(
      "no-bash.sh",
      `cat > pre.json; echo "bash is off limits here" >&2; exit 2`,
    );
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PreToolUse: [group(hook, "Bash")] } },
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("done");
    expect(bashResult()).toEqual({
      error: {
        code: "NOT_ALLOWED",
        message: "bash (touch ran.txt) was blocked by a PreToolUse hook: bash is off limits here",
      },
    });
    expect(existsSync(path.join(work, "ran.txt"))).toBe(false);
    const input = JSON.parse(readFileSync(path.join(work, "pre.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const root = await agentNamed(e2e.db(), run.json!.tree_id, "root");
    expect(input).toMatchObject({
      hook_event_name: "PreToolUse",
      session_id: root.id,
      agent_id: root.id,
      agent_name: "root",
      parent_id: null,
      cwd: work,
      tool_name: "bash",
      tool_input: { command: "touch ran.txt" },
      tool_use_id: expect.any(String),
    });
  });

  it("a JSON deny refuses the call with its reason", async () => {
    const deny = JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "not on a Friday",
      },
    });
    const hook = hookScript("deny.sh", `echo '${deny}'`);
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PreToolUse: [group(hook)] } },
    });
    expect(run.stderr).toBe("");
    expect(bashResult()).toEqual({
      error: {
        code: "NOT_ALLOWED",
        message: "bash (touch ran.txt) is denied by a PreToolUse hook: not on a Friday",
      },
    });
    expect(existsSync(path.join(work, "ran.txt"))).toBe(false);
  });

  it("a hook's allow does not skip the approval the policy asks for (--approve none refuses)", async () => {
    const allow = JSON.stringify({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" },
    });
    const hook = hookScript("allow.sh", `touch hook-ran; echo '${allow}'`);
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: work,
      env: { WARREN_APPROVE: "none" },
      config: { hooks: { PreToolUse: [group(hook, "bash")] } },
    });
    expect(run.stderr).toBe("");
    expect(existsSync(path.join(work, "hook-ran"))).toBe(true);
    expect(bashResult()).toEqual({
      error: {
        code: "NOT_ALLOWED",
        message:
          "bash (touch ran.txt) needs a person's approval, and this run answers no (--approve none)",
      },
    });
    expect(existsSync(path.join(work, "ran.txt"))).toBe(false);
  });

  it("a hook that times out is one line, is killed, and the call goes on as the policy said", async () => {
    const hook = hookScript("slow.sh", `sleep 300`);
    bashOnce("touch ran.txt");
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PreToolUse: [group(hook, "", 1)] } },
    });
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("done");
    expect(run.stderr).toBe(
      `warren: root: hook PreToolUse (${hook}) timed out after 1 s and was killed; ignored\n`,
    );
    expect(existsSync(path.join(work, "ran.txt"))).toBe(true);
    const events = await eventsOf(e2e.db(), run.json!.tree_id);
    expect(events.filter((e) => e.kind === "system").map((e) => e.content)).toEqual([
      `hook PreToolUse (${hook}) timed out after 1 s and was killed; ignored`,
    ]);
  });
});

describe("PostToolUse", () => {
  it("sees the call's input and response, and exit 2 talks back with the result", async () => {
    const record = hookScript("record.sh", `cat >> post.jsonl; echo >> post.jsonl`);
    const lint = hookScript("lint.sh", `echo "lint: line 1 is too long" >&2; exit 2`);
    const broken = hookScript("broken.sh", `echo "no config" >&2; exit 1`);
    bashOnce("echo hi");
    const run = await e2e.prompt("go", {
      cwd: work,
      config: {
        hooks: {
          PostToolUse: [group(record), group(lint, "Bash"), group(broken, "read_file")],
        },
      },
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("done");
    expect(bashResult()).toEqual({
      exit_code: 0,
      output: "hi\n",
      hook_feedback: "lint: line 1 is too long",
    });
    const [input, ...more] = jsonLines(path.join(work, "post.jsonl"));
    expect(more).toEqual([]);
    expect(input).toMatchObject({
      hook_event_name: "PostToolUse",
      agent_name: "root",
      tool_name: "bash",
      tool_input: { command: "echo hi" },
      tool_response: { exit_code: 0, output: "hi\n" },
    });
    // Recorded once, with the feedback: what the model read is what the transcript holds.
    const results = (await eventsOf(e2e.db(), run.json!.tree_id)).filter(
      (e) => e.kind === "tool_result",
    );
    expect(results).toHaveLength(1);
    expect(JSON.parse(results[0]!.content)).toEqual(bashResult());
  });

  it("a hook that fails (exit 1) is one line and the result is the tool's own", async () => {
    const broken = hookScript("broken.sh", `echo "no config found" >&2; exit 1`);
    bashOnce("echo hi");
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PostToolUse: [group(broken)] } },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `warren: root: hook PostToolUse (${broken}) failed with exit code 1: no config found; ignored\n`,
    );
    expect(bashResult()).toEqual({ exit_code: 0, output: "hi\n" });
  });
});

/** The root forks "helper", waits for it and answers "all done"; the helper answers `reply`. */
function helperFanIn(reply: Reply): void {
  e2e.fake().script([
    {
      agent: "root",
      match: isFirst,
      reply: {
        toolCalls: [
          { name: "fork", arguments: { name: "helper", prompt: "say hi", context: "fresh" } },
        ],
      },
    },
    {
      agent: "root",
      match: after("fork"),
      reply: (req) => ({
        toolCalls: [
          { name: "wait", arguments: { timeout: 30, from_agents: [forkedIds(req).helper] } },
        ],
      }),
    },
    { agent: "root", match: after("wait"), reply: { text: "all done" } },
    { agent: "helper", reply },
  ]);
}

describe("Stop and SubagentStop", () => {
  it("Stop fires for the root's end of turn, SubagentStop for the child's", async () => {
    const stop = hookScript("stop.sh", `cat >> stop.jsonl; echo >> stop.jsonl`);
    const sub = hookScript("sub.sh", `cat >> sub.jsonl; echo >> sub.jsonl`);
    helperFanIn({ text: "hi from helper" });
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { Stop: [group(stop)], SubagentStop: [group(sub)] } },
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("all done");
    const db = e2e.db();
    const root = await agentNamed(db, run.json!.tree_id, "root");
    const helper = await agentNamed(db, run.json!.tree_id, "helper");
    expect(jsonLines(path.join(work, "stop.jsonl"))).toEqual([
      expect.objectContaining({
        hook_event_name: "Stop",
        session_id: root.id,
        agent_name: "root",
        stop_hook_active: false,
        last_assistant_message: "all done",
      }),
    ]);
    expect(jsonLines(path.join(work, "sub.jsonl"))).toEqual([
      expect.objectContaining({
        hook_event_name: "SubagentStop",
        agent_id: helper.id,
        agent_name: "helper",
        parent_id: root.id,
        last_assistant_message: "hi from helper",
      }),
    ]);
    expect(root.state).toBe("idle");
    expect(helper.state).toBe("idle");
  });

  it("SubagentStop fires for a child whose turn ends with send {final: true}", async () => {
    const sub = hookScript("sub.sh", `cat >> sub.jsonl; echo >> sub.jsonl`);
    helperFanIn({
      toolCalls: [
        { name: "send", arguments: { to: "parent", message: "hi from helper", final: true } },
      ],
    });
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { SubagentStop: [group(sub)] } },
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("all done");
    // The child's result cost one request: no request after the send's result.
    expect(requestsOf(e2e.fake(), "helper")).toHaveLength(1);
    const helper = await agentNamed(e2e.db(), run.json!.tree_id, "helper");
    expect(jsonLines(path.join(work, "sub.jsonl"))).toEqual([
      expect.objectContaining({
        hook_event_name: "SubagentStop",
        agent_id: helper.id,
        agent_name: "helper",
        last_assistant_message: "hi from helper",
      }),
    ]);
    expect(helper.state).toBe("idle");
  });
});

/** Polls `probe` until it gives a value (a safety net of 30 s, so a broken run fails, not hangs). */

function startIn(config: object, extra: Record<string, string> = {}) {
  const env = warrenEnv({
    databaseUrl: e2e.db().$client.options.connectionString!,
    modelUrl: e2e.fake().baseURL,
    extra,
  });
  const dir = path.join(env.XDG_CONFIG_HOME!, "warren");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "config.json"), JSON.stringify(config));
  return startWarren(["-p", "go", "--timeout", "60", "--json"], env, work);
}

/** Live processes running the slow hook's `sleep 301.25`. */
function sleeping(): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.startsWith("sleep 301.25") && state !== "Z") found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("Notification", () => {
  it("tells the hook when a call waits for the person's approval", async () => {
    const hook = hookScript("notify.sh", `cat > notification.json`);
    bashOnce("echo hi");
    const run = startIn(
      { hooks: { Notification: [group(hook, "permission_prompt")] } },
      { WARREN_APPROVE: "ask" },
    );
    const file = path.join(work, "notification.json");
    const told = await until("the notification", () =>
      existsSync(file) && readFileSync(file, "utf8").endsWith("}")
        ? readFileSync(file, "utf8")
        : undefined,
    );
    expect(JSON.parse(told)).toMatchObject({
      hook_event_name: "Notification",
      notification_type: "permission_prompt",
      agent_name: "root",
      message: expect.stringMatching(/^root needs your approval for .*echo hi.* \(request \d+\)$/),
    });
    const listed = await e2e.warren(["approvals", "--all", "--json"]);
    const [request] = JSON.parse(listed.stdout) as { id: number }[];
    expect((await e2e.warren(["deny", String(request!.id)])).code).toBe(0);
    const done = await run.done;
    expect(done.code).toBe(0);
    expect(done.stderr).toBe("");
    expect(bashResult()).toMatchObject({ error: { code: "NOT_ALLOWED" } });
  });
});

describe("an interrupt never waits for a hook", () => {
  it("`warren stop` during a slow PreToolUse ends the turn and kills the hook", async () => {
    // A sleep of its own length, found by its command line (in the sandbox's PID namespace $$ means
    // nothing out here).
    const hook = hookScript("slow.sh", `touch hook.started; sleep 301.25`);
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: "touch ran.txt" } }] },
      },
    ]);
    const run = startIn({
      hooks: {
        PreToolUse: [{ matcher: "", hooks: [{ type: "command", command: hook, timeout: 600 }] }],
      },
    });
    await until("the hook to start", () =>
      existsSync(path.join(work, "hook.started")) && sleeping().length > 0 ? true : undefined,
    );
    const root = await until("the root", async () => {
      const rows = await e2e
        .db()
        .execute<{ id: string }>(
          sql`select id from agents where parent_id is null order by created_at desc limit 1`,
        );
      return rows.rows[0]?.id;
    });
    expect((await e2e.warren(["stop", root])).code).toBe(0);
    const done = await run.done;
    expect(done.code).toBe(0);
    expect(await until("the hook to be gone", () => (sleeping().length ? undefined : true))).toBe(
      true,
    );
    expect(existsSync(path.join(work, "ran.txt"))).toBe(false);
    const kinds = (await eventsOf(e2e.db(), root)).map((e) => e.kind);
    expect(kinds).toContain("interrupted");
  });
});

describe("MCP tools", () => {
  const EVERYTHING = fileURLToPath(
    new URL(
      "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
      import.meta.url,
    ),
  );

  it("a matcher names them as mcp__server__tool: one call blocked, the other seen after", async () => {
    const block = hookScript("block.sh", `echo "no echoing" >&2; exit 2`);
    const record = hookScript("record.sh", `cat >> post.jsonl; echo >> post.jsonl`);
    const config = {
      mcp_servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
      policy: { "mcp__everything__*": "allow" },
      // In this repository's node_modules, where the first run's working directory is: trusted.
      trusted_paths: [path.resolve(EVERYTHING, "../../../..")],
      hooks: {
        PreToolUse: [group(block, "mcp__everything__echo")],
        PostToolUse: [group(record, "mcp__.*")],
      },
    };
    // The server's tool list, cached before the run (as `warren mcp list` does for a person).
    const file = path.join(work, "config.json");
    writeFileSync(file, JSON.stringify(config));
    expect((await e2e.warren(["mcp", "list"], { WARREN_CONFIG: file })).code).toBe(0);
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "mcp__everything__echo", arguments: { message: "hello" } },
            { name: "mcp__everything__get-sum", arguments: { a: 20, b: 22 } },
          ],
        },
      },
      { agent: "root", match: after("mcp__everything__get-sum"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", { cwd: work, env: { WARREN_CONFIG: file } });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("done");
    const [echo, sum] = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!);
    expect(echo!.value).toEqual({
      error: {
        code: "NOT_ALLOWED",
        // An MCP call is named by all its arguments (issue 38).
        message:
          'mcp__everything__echo ({"message":"hello"}) was blocked by a PreToolUse hook: no echoing',
      },
    });
    expect(JSON.stringify(sum!.value)).toContain("42");
    const seen = jsonLines(path.join(work, "post.jsonl"));
    expect(seen).toEqual([
      expect.objectContaining({
        tool_name: "mcp__everything__get-sum",
        tool_input: { a: 20, b: 22 },
        tool_response: sum!.value,
      }),
    ]);
  });
});
