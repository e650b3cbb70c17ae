// bash tool: exit codes, interleaved and capped output, and that timeout and abort kill the
// whole process group promptly.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash.js";
import type { ShellSettings } from "../../src/sandbox/settings.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "warren-bash-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Unsandboxed: `$$` is then a host pid (test/security/sandbox.test.ts covers the sandbox). */
const UNCONFINED = JSON.stringify({
  sandbox: { mode: "off", network: true, writable: [], bwrap: "bwrap" },
  env: { set: {}, pass: [] },
});

function run(args: unknown, signal = new AbortController().signal): Promise<ToolOutcome> {
  return bashTool.run(args, { cwd: dir, signal, shell: JSON.parse(UNCONFINED) as ShellSettings });
}

function value(outcome: ToolOutcome): Record<string, unknown> {
  if (!outcome.ok) throw new Error(`tool failed: ${outcome.error.message}`);
  return outcome.value as Record<string, unknown>;
}

/** Live (non-zombie) processes whose process group is `pgid`, read from /proc. */
async function groupMembers(pgid: number): Promise<number[]> {
  const live: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    // Fields after the ")" that closes the command name: state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") live.push(Number(name));
  }
  return live;
}

async function expectGroupGone(pgid: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while ((await groupMembers(pgid)).length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(await groupMembers(pgid)).toEqual([]);
}

describe("bash", () => {
  it("runs in cwd and reports the exit code; non-zero is a normal result", async () => {
    expect(value(await run({ command: "pwd" }))).toEqual({ exit_code: 0, output: `${dir}\n` });
    expect(value(await run({ command: "echo out; exit 3" }))).toEqual({
      exit_code: 3,
      output: "out\n",
    });
  });

  it("interleaves stdout and stderr in arrival order", async () => {
    const out = value(
      await run({ command: "echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three" }),
    );
    expect(out.output).toBe("one\ntwo\nthree\n");
  });

  it("closes stdin so commands never wait for input", async () => {
    const started = Date.now();
    expect(value(await run({ command: "cat; read line; echo done" })).output).toBe("done\n");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("caps output, keeping head and tail and saying how much was cut", async () => {
    const out = value(
      await run({ command: "echo START; head -c 100000 /dev/zero | tr '\\0' a; echo; echo END" }),
    );
    const text = out.output as string;
    expect(out.truncated).toBe(true);
    expect(text.length).toBeLessThanOrEqual(30_000);
    expect(text.startsWith("START\naaa")).toBe(true);
    expect(text.endsWith("aaa\nEND\n")).toBe(true);
    const cut = Number(/\[… (\d+) characters cut …\]/.exec(text)?.[1]);
    expect(cut).toBe(6 + 100_000 + 1 + 4 - 2 * 14_900);
  });

  it("leaves short output untouched", async () => {
    const out = value(await run({ command: "head -c 29000 /dev/zero | tr '\\0' b" }));
    expect(out.output).toBe("b".repeat(29_000));
    expect(out.truncated).toBeUndefined();
  });

  it("kills the whole process group on timeout", async () => {
    const started = Date.now();
    const out = value(
      await run({ command: "echo $$ > pgid; echo begun; sleep 30 & sleep 30; wait", timeout: 1 }),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out).toMatchObject({ timed_out: true, output: "begun\n", exit_code: 137 });
    await expectGroupGone(Number(await readFile(path.join(dir, "pgid"), "utf8")));
  });

  it("stops promptly on abort and reports interrupted", async () => {
    const controller = new AbortController();
    const pending = run(
      { command: "echo $$ > pgid; sleep 30 & sleep 30; wait" },
      controller.signal,
    );
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    controller.abort();
    const out = value(await pending);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(out).toMatchObject({ interrupted: true });
    expect(out.timed_out).toBeUndefined();
    await expectGroupGone(Number(await readFile(path.join(dir, "pgid"), "utf8")));
  });

  it("does not start a command when already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const out = value(await run({ command: "touch ran" }, controller.signal));
    expect(out).toMatchObject({ interrupted: true });
    await expect(readFile(path.join(dir, "ran"))).rejects.toThrow();
  });

  it("returns soon after bash exits even if a background process holds its output", async () => {
    const started = Date.now();
    const out = value(await run({ command: "setsid sleep 3 & echo quick" }));
    expect(out).toMatchObject({ exit_code: 0, output: "quick\n" });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("runs the command as plain bash -c would: no fd 3, no arguments, $0 is bash", async () => {
    const out = value(
      await run({
        command: 'echo "[$0][$#][$1]"; [ -e /proc/$$/fd/3 ] && echo fd3 || echo no-fd3',
      }),
    );
    expect(out).toMatchObject({ exit_code: 0, output: "[bash][0][]\nno-fd3\n" });
    expect(value(await run({ command: "exit 7" }))).toMatchObject({ exit_code: 7 });
  });

  it("leaves no command running when warren is killed with kill -9", async () => {
    // A process of its own runs the built tool (as a worker would); we kill it mid-command.
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
    const built = path.join(root, "dist/src/tools/bash.js");
    expect(existsSync(built), "run npm run build first").toBe(true);
    const script =
      `const { bashTool } = await import(${JSON.stringify(built)});` +
      `await bashTool.run({ command: "echo $$ > pgid; sleep 300 & sleep 300" }, ` +
      `{ cwd: ${JSON.stringify(dir)}, signal: new AbortController().signal, shell: ${UNCONFINED} });`;
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: "ignore",
    });
    const pgidFile = path.join(dir, "pgid");
    const deadline = Date.now() + 10_000;
    while (!existsSync(pgidFile) || (await readFile(pgidFile, "utf8")).trim() === "") {
      if (Date.now() > deadline) throw new Error("the command never started");
      await new Promise((r) => setTimeout(r, 20));
    }
    const pgid = Number(await readFile(pgidFile, "utf8"));
    expect((await groupMembers(pgid)).length).toBeGreaterThan(0);
    const exited = new Promise((resolve) => host.once("exit", resolve));
    host.kill("SIGKILL");
    await exited;
    await expectGroupGone(pgid);
  });

  it.each([
    ["null", null],
    ["a string", "ls"],
    ["an array", ["ls"]],
    ["missing command", {}],
    ["empty command", { command: "" }],
    ["wrong-typed command", { command: 5 }],
    ["wrong-typed timeout", { command: "ls", timeout: "5" }],
    ["zero timeout", { command: "ls", timeout: 0 }],
    ["timeout over 600", { command: "ls", timeout: 601 }],
    ["unknown argument", { command: "ls", cwd: "/" }],
  ])("rejects %s with INVALID_ARGS", async (_label, args) => {
    const out = await run(args);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.code).toBe("INVALID_ARGS");
  });
});
