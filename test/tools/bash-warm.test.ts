// bash in a warm sandbox (src/sandbox/warm.ts warmLaunch): one started bubblewrap per (agent,
// settings, working directory), each call entered into it. Each call must still behave as if it
// had a sandbox of its own: its own cwd, environment, output and exit code; nothing it leaves
// (a process, a file in /tmp) reaches the next call; a timeout leaves no process behind; a
// killed sandbox is replaced; warren's death takes it down; commands cannot inspect its keeper.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash.js";
import { EMPTY_SHELL_ENV } from "../../src/sandbox/env.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "../../src/sandbox/settings.js";
import { closeWarmSandboxes, warmSandboxCount, warmSandboxPids } from "../../src/sandbox/warm.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

let dir: string;
beforeEach(async () => {
  closeWarmSandboxes();
  dir = await mkdtemp(path.join(tmpdir(), "warren-warm-"));
});
afterEach(async () => {
  closeWarmSandboxes();
  await rm(dir, { recursive: true, force: true });
});

const ON: ShellSettings = { sandbox: { ...DEFAULT_SANDBOX, mode: "on" }, env: EMPTY_SHELL_ENV };

function run(
  command: string,
  opts: { cwd?: string; shell?: ShellSettings; timeout?: number; agent?: string } = {},
): Promise<ToolOutcome> {
  const ctx = {
    cwd: opts.cwd ?? dir,
    signal: new AbortController().signal,
    shell: opts.shell ?? ON,
    ...(opts.agent && { agent: { id: opts.agent } }),
  };
  return bashTool.run({ command, ...(opts.timeout && { timeout: opts.timeout }) }, ctx);
}

/** A sleep duration no other test run uses, so its processes are this run's own. */
function unique(): string {
  return `${4000 + Math.floor(Math.random() * 1000)}.${process.pid}${Date.now() % 100000}`;
}

function value(outcome: ToolOutcome): { exit_code: number | null; output: string } {
  if (!outcome.ok) throw new Error(`tool failed: ${outcome.error.message}`);
  return outcome.value as { exit_code: number | null; output: string };
}

/** Live (non-zombie) host processes whose command line starts with `text` (and has `also`). */
function processesWith(text: string, also = ""): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.startsWith(text) && cmdline.includes(also) && state !== "Z")
        found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function expectNone(text: string, also = ""): Promise<void> {
  const deadline = Date.now() + 3000;
  while (processesWith(text, also).length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(processesWith(text, also)).toEqual([]);
}

describe("bash in a warm sandbox", () => {
  it("reuses one sandbox for calls one after another, each with its exit code", async () => {
    expect(value(await run("echo one; exit 3"))).toEqual({ exit_code: 3, output: "one\n" });
    expect(warmSandboxCount()).toBe(1);
    const pids = warmSandboxPids();
    expect(value(await run("echo two >&2"))).toEqual({ exit_code: 0, output: "two\n" });
    expect(warmSandboxPids()).toEqual(pids);
  });

  it("runs each command as plain bash -c would: no fd 3, no arguments, $0 is bash", async () => {
    const probe = 'echo "[$0][$#][$1]"; [ -e /proc/$$/fd/3 ] && echo fd3 || echo no-fd3';
    for (let i = 0; i < 3; i++) {
      expect(value(await run(probe))).toEqual({ exit_code: 0, output: "[bash][0][]\nno-fd3\n" });
    }
    expect(value(await run("exit 7"))).toMatchObject({ exit_code: 7 });
    expect(value(await run("if then"))).toMatchObject({ exit_code: 2 });
    expect(value(await run("echo a\necho b"))).toEqual({ exit_code: 0, output: "a\nb\n" });
  });

  it("runs each call with no capability and no way to gain one", async () => {
    const out = value(await run("grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status"));
    expect(out.output).toMatch(/CapPrm:\s+0+\n/);
    expect(out.output).toMatch(/CapEff:\s+0+\n/);
    expect(out.output).toMatch(/CapBnd:\s+0+\n/);
    expect(out.output).toMatch(/NoNewPrivs:\s+1/);
  });

  it("a command cannot inspect or stop the sandbox's keeper", async () => {
    await run("true");
    const pids = warmSandboxPids();
    const out = value(
      await run(
        "cat /proc/1/environ >/dev/null 2>&1 && echo environ-read; " +
          "cat /proc/1/mem >/dev/null 2>&1 && echo mem-read; kill -9 1; echo done",
      ),
    );
    expect(out.output).not.toContain("-read");
    expect(value(await run("echo again")).output).toBe("again\n");
    expect(warmSandboxPids()).toEqual(pids);
  });

  it("gives each call its own working directory and environment", async () => {
    const other = path.join(dir, "other");
    mkdirSync(other);
    const withEnv = (value: string): ShellSettings => ({
      ...ON,
      env: { set: { WARM_TEST: value }, pass: [] },
    });
    expect(value(await run("pwd; echo $WARM_TEST", { shell: withEnv("a") })).output).toBe(
      `${dir}\na\n`,
    );
    expect(value(await run("echo $WARM_TEST", { shell: withEnv("b") })).output).toBe("b\n");
    expect(value(await run("pwd", { cwd: other })).output).toBe(`${other}\n`);
    expect(value(await run("pwd")).output).toBe(`${dir}\n`);
  });

  it("keeps two agents in the same directory in sandboxes of their own", async () => {
    await run("true", { agent: "a1" });
    await run("true", { agent: "a2" });
    expect(warmSandboxCount()).toBe(2);
  });

  it("two calls at once get a sandbox each and their own output", async () => {
    const loud = (tag: string) => `for i in $(seq 200); do echo ${tag}; echo ${tag} >&2; done`;
    const [a, b] = await Promise.all([run(loud("AAAA")), run(loud("BBBB"))]);
    const lines = (out: string) => new Set(out.trim().split("\n"));
    expect(lines(value(a).output)).toEqual(new Set(["AAAA"]));
    expect(lines(value(b).output)).toEqual(new Set(["BBBB"]));
    expect(value(a).output.split("\n")).toHaveLength(401);
    expect(warmSandboxCount()).toBe(2);
  });

  it("a timeout kills everything the call started, setsid included, and the next call runs", async () => {
    const [t1, t2] = [unique(), unique()];
    const out = value(await run(`setsid sleep ${t1} & sleep ${t2}`, { timeout: 1 }));
    expect(out).toMatchObject({ timed_out: true });
    await expectNone(`sleep ${t1}`);
    await expectNone(`sleep ${t2}`);
    expect(warmSandboxCount()).toBe(0);
    expect(value(await run("echo next")).output).toBe("next\n");
  });

  it("what a call leaves running ends with the call, as in a sandbox of its own", async () => {
    const t = unique();
    expect(value(await run(`setsid sleep ${t} >/dev/null 2>&1 & echo left`)).output).toBe("left\n");
    await expectNone(`sleep ${t}`);
    expect(value(await run("ps -e -o comm= | grep -c sleep || true")).output).toBe("1\n"); // the keeper
  });

  it("each call starts with an empty /tmp", async () => {
    const baseline = value(await run("ls -A /tmp")).output;
    await run("echo secret > /tmp/note; mkdir -p /tmp/d/e; touch /tmp/d/e/f");
    expect(value(await run("ls -A /tmp")).output).toBe(baseline);
    expect(value(await run("cat /tmp/note 2>&1 || true")).output).toContain("No such file");
  });

  it("a killed sandbox is started again on the next call", async () => {
    await run("true");
    const [keeper] = warmSandboxPids();
    process.kill(keeper!, "SIGKILL");
    await new Promise((r) => setTimeout(r, 50));
    expect(value(await run("echo back")).output).toBe("back\n");
    expect(warmSandboxPids()).not.toContain(keeper);
  });

  it("a file to hide made after the sandbox started is hidden from the next call", async () => {
    const secret = path.join(dir, "pgpass");
    const saved = process.env.PGPASSFILE;
    process.env.PGPASSFILE = secret;
    try {
      await run("true");
      writeFileSync(secret, "the-password\n");
      const out = value(await run("cat pgpass; echo end")).output;
      expect(out).toContain("end\n");
      expect(out).not.toContain("the-password");
    } finally {
      if (saved === undefined) delete process.env.PGPASSFILE;
      else process.env.PGPASSFILE = saved;
    }
  });

  it("takes the sandbox down when warren is killed with kill -9", async () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
    const built = path.join(root, "dist/src/tools/bash.js");
    expect(existsSync(built), "run npm run build first").toBe(true);
    const shell = JSON.stringify(ON);
    const [a, b] = [unique(), unique()]; // durations no other run uses
    const script =
      `const { bashTool } = await import(${JSON.stringify(built)});` +
      `const ctx = { cwd: ${JSON.stringify(dir)}, signal: new AbortController().signal, shell: ${shell} };` +
      `await bashTool.run({ command: "true" }, ctx);` +
      `await bashTool.run({ command: "echo go > started; setsid sleep ${a} & sleep ${b}" }, ctx);`;
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => host.once("exit", resolve));
    try {
      // `started` is written before `sleep b` is running: wait for the process itself.
      const deadline = Date.now() + 10_000;
      while (!existsSync(path.join(dir, "started")) || processesWith(`sleep ${b}`).length === 0) {
        if (Date.now() > deadline) throw new Error("the command never started");
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(processesWith(`sleep ${b}`).length).toBe(1);
      expect(processesWith("bwrap", `--bind ${dir} ${dir}`).length).toBe(1);
    } finally {
      host.kill("SIGKILL");
      await exited;
    }
    await expectNone(`sleep ${a}`);
    await expectNone(`sleep ${b}`);
    await expectNone("bwrap", `--bind ${dir} ${dir}`);
  });
});
