// Hooks as a way around the boundaries (SPEC §3, §9), tried by a hostile model: the hook process
// sees none of warren's secrets and, sandboxed, writes nowhere but the working directory, like
// the agent's own bash; the model's tool input reaches a hook only as JSON on stdin, never as
// shell text; and a hook's `allow` never widens the policy (a deny rule stays denied, an ask
// stays asked). The first two go through the runtime's hook path (runtime/hook-calls.ts) with the
// config loadConfig gives; the last two end to end through `bin/warren -p`. Hook scripts live in
// `.claude/hooks/`, which the sandbox keeps read-only to agents: a hook never runs a file an agent
// could have written (issue 37), which the last block tries end to end.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { loadConfig } from "../../src/config/config.js";
import { preToolUse } from "../../src/runtime/hook-calls.js";
import { probeBwrap } from "../../src/sandbox/launch.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";
import { leaked, makeFixture, type Fixture } from "./fixture.js";

const e2e = useE2E();

function script(dir: string, name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const group = (command: string, matcher = "") => ({
  matcher,
  hooks: [{ type: "command", command }],
});

describe("a hook process is boxed in like the agent's bash", () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeFixture();
  });
  afterEach(() => fx.cleanup());

  /** Runs the PreToolUse hooks of a bash call the way the gate does, with the fixture's config. */
  async function runPreToolUse(hookBody: string, sandbox: "on" | "off") {
    const hook = script(path.join(fx.cwd, ".claude", "hooks"), "probe.sh", hookBody);
    writeFileSync(
      fx.configFile,
      JSON.stringify({
        api_key: "sk-config-61ad0f",
        sandbox,
        hooks: { PreToolUse: [group(hook)] },
      }),
    );
    const config = loadConfig({ ...process.env }, fx.cwd);
    const db = e2e.db();
    const agent = await createTree(db, { cwd: fx.cwd });
    return preToolUse(
      { db, config, agent, signal: new AbortController().signal },
      { id: "call_1", name: "bash", arguments: '{"command":"ls"}' },
      { command: "ls" },
      "allow",
    );
  }

  const probeSecrets = `{ env; set; cat /proc/$PPID/environ /proc/1/environ; grep -a -r -h . /proc/[0-9]*/environ;
    cat "$HOME/.config/warren/config.json" "$HOME/.pgpass" "$HOME/.local/share/warren/postgres.json"; } > seen.txt 2>&1; exit 0`;

  it("sees no secret: environment, other processes, config, password files (sandboxed)", async () => {
    expect(await probeBwrap("bwrap")).toEqual({ ok: true });
    const outcome = await runPreToolUse(probeSecrets, "on");
    expect(outcome).toEqual({ kind: "verdict", verdict: "allow", byHook: false, reason: "" });
    const seen = readFileSync(path.join(fx.cwd, "seen.txt"), "utf8");
    expect(seen).toContain("PATH=");
    expect(seen).not.toMatch(/DATABASE_URL|OPENAI_API_KEY|PGPASSWORD|WARREN_MODEL/);
    expect(leaked(seen)).toEqual([]);
  });

  it("its environment is the allowlist even without the sandbox (sandbox off)", async () => {
    await runPreToolUse(`{ env; set; } > seen.txt 2>&1; exit 0`, "off");
    const seen = readFileSync(path.join(fx.cwd, "seen.txt"), "utf8");
    expect(seen).toContain("PATH=");
    expect(seen).not.toMatch(/DATABASE_URL|OPENAI_API_KEY|PGPASSWORD|WARREN_MODEL/);
    expect(leaked(seen)).toEqual([]);
  });

  it("cannot write outside the working directory when sandboxed", async () => {
    expect(await probeBwrap("bwrap")).toEqual({ ok: true });
    const target = path.join(fx.outside, "escaped");
    await runPreToolUse(
      `echo x > ${target}; echo x > "$HOME/escaped"; echo pwned >> ${fx.configFile}; ` +
        `touch inside; exit 0`,
      "on",
    );
    expect(existsSync(path.join(fx.cwd, "inside"))).toBe(true);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(path.join(fx.home, "escaped"))).toBe(false);
    expect(readFileSync(fx.configFile, "utf8")).not.toContain("pwned");
  });
});

describe("a hostile model cannot get through or around a hook", () => {
  let work: string;
  beforeEach(() => {
    fxWork = makeFixture();
    work = fxWork.cwd;
  });
  let fxWork: Fixture;
  afterEach(() => fxWork.cleanup());

  const HOSTILE = [
    `"; touch pwned_quote; echo "`,
    `'; touch pwned_single; echo '`,
    "$(touch pwned_subst)",
    "`touch pwned_backtick`",
    "x\ntouch pwned_newline\n",
    "$HOME ${IFS}; touch pwned_semicolon",
  ].join(" ");

  it("tool input with quotes, $(…), backticks and newlines reaches the hook only as JSON", async () => {
    const hook = script(path.join(work, ".claude", "hooks"), "read.sh", `cat > got.json; exit 2`);
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: HOSTILE } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PreToolUse: [group(hook, `Bash|mcp__.*`)] } },
    });
    expect(run.json?.text).toBe("done");
    // Blocked by the hook (exit 2): the command never ran, so anything pwned came from the hook.
    expect(readdirSync(work).filter((f) => f.startsWith("pwned"))).toEqual([]);
    const got = JSON.parse(readFileSync(path.join(work, "got.json"), "utf8")) as {
      tool_input: unknown;
    };
    expect(got.tool_input).toEqual({ command: HOSTILE });
  });

  const allowAll = JSON.stringify({
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" },
  });

  it("a hook's allow cannot widen a deny rule: the call is denied and the hook not even run", async () => {
    const hook = script(
      path.join(work, ".claude", "hooks"),
      "allow.sh",
      `touch hook-ran; echo '${allowAll}'`,
    );
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: "rm -rf precious" } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    mkdirSync(path.join(work, "precious"));
    const run = await e2e.prompt("go", {
      cwd: work,
      config: {
        policy: { bash: { deny: ["rm *"], default: "allow" } },
        hooks: { PreToolUse: [group(hook)] },
      },
    });
    expect(run.json?.text).toBe("done");
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value;
    expect(result).toEqual({
      error: {
        code: "NOT_ALLOWED",
        message: "bash (rm -rf precious) is denied by the tool policy",
      },
    });
    expect(existsSync(path.join(work, "precious"))).toBe(true);
    expect(existsSync(path.join(work, "hook-ran"))).toBe(false);
  });

  it("a hook's allow cannot answer an ask: under --approve none the call is refused", async () => {
    const hook = script(
      path.join(work, ".claude", "hooks"),
      "allow.sh",
      `touch hook-ran; echo '${allowAll}'`,
    );
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "write_file", arguments: { path: "new.txt", content: "x" } }],
        },
      },
      { agent: "root", match: after("write_file"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd: work,
      env: { WARREN_APPROVE: "none" },
      config: { hooks: { PreToolUse: [group(hook, "Write")] } },
    });
    expect(run.json?.text).toBe("done");
    expect(existsSync(path.join(work, "hook-ran"))).toBe(true);
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value;
    expect(result).toMatchObject({ error: { code: "NOT_ALLOWED" } });
    expect(existsSync(path.join(work, "new.txt"))).toBe(false);
  });
});

describe("a hook never runs what an agent could have written (issue 37)", () => {
  let fx: Fixture;
  let work: string;
  beforeEach(() => {
    fx = makeFixture();
    work = fx.cwd;
  });
  afterEach(() => fx.cleanup());

  const writeThenDone = () =>
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "x" } }],
        },
      },
      { agent: "root", match: after("write_file"), reply: { text: "done" } },
    ]);

  const bashThenDone = () =>
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: "touch bash-ran" } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);

  it("a PostToolUse script in the working directory is refused with one line; trusted_paths runs it", async () => {
    const lint = script(
      path.join(work, "tools"),
      "lint.sh",
      `touch "${work}/lint-ran"; echo 'lint feedback' >&2; exit 2`,
    );
    const command = `bash "$CLAUDE_PROJECT_DIR"/tools/lint.sh`;
    writeThenDone();
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PostToolUse: [group(command)] } },
    });
    expect(run.json?.text, run.stderr).toBe("done");
    expect(existsSync(path.join(work, "lint-ran"))).toBe(false);
    const line = run.stderr.split("\n").find((l) => l.includes("refused"));
    expect(line).toContain(`hook PostToolUse (${command}) refused: it would run ${lint}`);
    expect(line).toContain(`add it to "trusted_paths"`);
    // The model never heard from it.
    expect(JSON.stringify(requestsOf(e2e.fake(), "root").at(-1))).not.toContain("lint feedback");

    // The person trusts that folder in their own config: it runs.
    writeThenDone();
    const trusted = await e2e.prompt("go", {
      cwd: work,
      config: {
        hooks: { PostToolUse: [group(command)] },
        trusted_paths: [path.join(work, "tools")],
      },
    });
    expect(trusted.json?.text, trusted.stderr).toBe("done");
    expect(existsSync(path.join(work, "lint-ran"))).toBe(true);
    expect(trusted.stderr).not.toContain("refused");
  }, 120_000);

  it(".claude/hooks/ (read-only to agents) runs; a symlink from there into the working directory does not", async () => {
    const hooks = path.join(work, ".claude", "hooks");
    script(hooks, "lint.sh", `touch "${work}/lint-ran"; exit 0`);
    const command = `"$CLAUDE_PROJECT_DIR"/.claude/hooks/lint.sh`;
    writeThenDone();
    const ok = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PostToolUse: [group(command)] } },
    });
    expect(ok.json?.text, ok.stderr).toBe("done");
    expect(existsSync(path.join(work, "lint-ran"))).toBe(true);
    expect(ok.stderr).not.toContain("refused");

    rmSync(path.join(work, "lint-ran"));
    const planted = script(path.join(work, "tools"), "lint.sh", `touch "${work}/lint-ran"`);
    rmSync(path.join(hooks, "lint.sh"));
    symlinkSync("../../tools/lint.sh", path.join(hooks, "lint.sh"));
    writeThenDone();
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PostToolUse: [group(command)] } },
    });
    expect(run.json?.text, run.stderr).toBe("done");
    expect(existsSync(path.join(work, "lint-ran"))).toBe(false);
    expect(run.stderr).toContain(`lint.sh (through ${planted}), which an agent could have written`);
  }, 120_000);

  it("a PreToolUse guard an agent could have rewritten blocks the call instead of running", async () => {
    const guard = script(path.join(work, "tools"), "guard.sh", `touch "${work}/guard-ran"`);
    bashThenDone();
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PreToolUse: [group(`${guard} --strict`, "Bash")] } },
    });
    expect(run.json?.text, run.stderr).toBe("done");
    expect(existsSync(path.join(work, "guard-ran"))).toBe(false);
    expect(existsSync(path.join(work, "bash-ran"))).toBe(false);
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value;
    expect(result).toMatchObject({ error: { code: "NOT_ALLOWED" } });
    expect(JSON.stringify(result)).toContain("could not run");
    expect(run.stderr).toMatch(/refused: it would run .*guard\.sh.*the call it guards is blocked/);
  }, 120_000);

  it("a PreToolUse guard that cannot be found blocks the call (fails closed)", async () => {
    bashThenDone();
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { hooks: { PreToolUse: [group("/nonexistent/warren-guard.sh", "Bash")] } },
    });
    expect(run.json?.text, run.stderr).toBe("done");
    expect(existsSync(path.join(work, "bash-ran"))).toBe(false);
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value;
    expect(result).toMatchObject({ error: { code: "NOT_ALLOWED" } });
    expect(run.stderr).toMatch(/could not run \(exit code 127.*the call it guards is blocked/);
  }, 120_000);
});
