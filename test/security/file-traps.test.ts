// Issue 28 item 7: file tools a hostile model cannot turn into traps (SPEC §3). Only regular
// files are read or written (a FIFO, socket, device or directory is refused at once, never
// waited on), the file opened is the file checked (a symlink or directory swapped in between
// cannot lead outside the working directory), and every tool call races the agent's abort signal
// (a hung call ends on interrupt or kill; twenty calls in one response add no listener warning).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { appendEvent } from "../../src/agents/events.js";
import { loadConfig } from "../../src/config/config.js";
import { runToolCalls } from "../../src/runtime/tool-calls.js";
import { bashTool } from "../../src/tools/bash.js";
import { editFileTool } from "../../src/tools/edit-file.js";
import { grepTool } from "../../src/tools/grep.js";
import type { FileToolContext } from "../../src/tools/paths.js";
import { readFileTool } from "../../src/tools/read-file.js";
import type { Tool, ToolOutcome } from "../../src/tools/tool.js";
import { writeFileTool } from "../../src/tools/write-file.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";

let base: string;
let cwd: string;
let outside: string;
const fifos: string[] = [];
let swapper: ChildProcess | undefined;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), "warren-traps-"));
  cwd = path.join(base, "cwd");
  outside = path.join(base, "outside");
  await mkdir(cwd);
  await mkdir(outside);
  await writeFile(path.join(cwd, "inside.txt"), "inside\n");
  await writeFile(path.join(outside, "secret.txt"), "SECRET\n");
});
afterEach(async () => {
  swapper?.kill("SIGKILL");
  swapper = undefined;
  // A read that did block on a FIFO (the protection removed) is let go: a writer appears.
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
    } catch {
      // gone
    }
  }
  await rm(base, { recursive: true, force: true });
});

const context = (fileAccess: "cwd" | "any" = "cwd"): FileToolContext => ({
  cwd,
  signal: new AbortController().signal,
  fileAccess,
});

function mkfifo(name: string): string {
  const at = path.join(cwd, name);
  const made = spawnSync("mkfifo", [at]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${String(made.stderr)}`);
  fifos.push(at);
  return at;
}

/** The outcome, or "hung" when it took longer than `ms`. */
async function within(ms: number, run: Promise<ToolOutcome>): Promise<ToolOutcome | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), ms)));
  try {
    return await Promise.race([run, hung]);
  } finally {
    clearTimeout(timer);
  }
}

const refusedAs = (code: string, message: RegExp) => ({
  ok: false,
  error: { code, message: expect.stringMatching(message) as unknown },
});

describe("only regular files", () => {
  it("read_file, edit_file and write_file on a FIFO answer at once with an error", async () => {
    mkfifo("pipe");
    const calls = [
      readFileTool.run({ path: "pipe" }, context()),
      editFileTool.run({ path: "pipe", old_string: "a", new_string: "b" }, context()),
      writeFileTool.run({ path: "pipe", content: "x" }, context()),
    ];
    for (const call of calls) {
      expect(await within(2_000, call)).toMatchObject(
        refusedAs("INVALID_ARGS", /pipe is (a FIFO|not a regular file)/),
      );
    }
  });

  it("a FIFO with a reader waiting is not written either", async () => {
    const fifo = mkfifo("pipe");
    // A reader holding the FIFO open: an open for writing would succeed; the fstat refuses it.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const outcome = await within(
        2_000,
        writeFileTool.run({ path: "pipe", content: "x" }, context()),
      );
      expect(outcome).toMatchObject(refusedAs("INVALID_ARGS", /a FIFO/));
    } finally {
      closeSync(reader);
    }
  });

  it("four FIFO reads at once starve nothing: another read still answers", async () => {
    for (const name of ["p1", "p2", "p3", "p4"]) mkfifo(name);
    const traps = ["p1", "p2", "p3", "p4"].map((name) =>
      within(3_000, readFileTool.run({ path: name }, context())),
    );
    // libuv's pool has four threads: with all four blocked in open(), this read would queue.
    const plain = await within(3_000, readFileTool.run({ path: "inside.txt" }, context()));
    expect(plain).toMatchObject({ ok: true, value: { content: "inside\n" } });
    for (const trap of await Promise.all(traps)) {
      expect(trap).toMatchObject(refusedAs("INVALID_ARGS", /a FIFO/));
    }
  });

  it("a socket, /dev/zero, a directory and /proc/self are refused with one clear line", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(cwd, "sock"), resolve));
    try {
      expect(await within(2_000, readFileTool.run({ path: "sock" }, context()))).toMatchObject(
        refusedAs("INVALID_ARGS", /sock is (a socket|not a regular file)/),
      );
      expect(
        await within(2_000, writeFileTool.run({ path: "sock", content: "x" }, context())),
      ).toMatchObject(refusedAs("INVALID_ARGS", /not a regular file|a socket/));
    } finally {
      server.close();
    }
    // A device, even where file access is "any": never read until memory runs out.
    expect(
      await within(2_000, readFileTool.run({ path: "/dev/zero" }, context("any"))),
    ).toMatchObject(refusedAs("INVALID_ARGS", /\/dev\/zero is a device/));
    expect(
      await within(2_000, writeFileTool.run({ path: "/dev/null", content: "x" }, context("any"))),
    ).toMatchObject(refusedAs("INVALID_ARGS", /\/dev\/null is a device/));
    // A directory.
    await mkdir(path.join(cwd, "dir"));
    expect(await readFileTool.run({ path: "dir" }, context())).toMatchObject(
      refusedAs("INVALID_ARGS", /dir is a directory/),
    );
    expect(
      await editFileTool.run({ path: "dir", old_string: "a", new_string: "b" }, context()),
    ).toMatchObject(refusedAs("INVALID_ARGS", /dir is a directory/));
    expect(await writeFileTool.run({ path: "dir", content: "x" }, context())).toMatchObject(
      refusedAs("INVALID_ARGS", /dir is a directory/),
    );
    // warren's own environment through /proc: outside the working directory.
    for (const given of ["/proc/self/environ", "/proc/self/fd/0", "/proc/self/root/etc/hostname"]) {
      expect(await readFileTool.run({ path: given }, context())).toMatchObject({
        ok: false,
        error: { code: "NOT_ALLOWED" },
      });
    }
  });

  it("a FIFO swapped in among the files grep searches is skipped, not waited on", async () => {
    // zz.txt alternates between a regular file and a FIFO (hard links to both, renamed over it),
    // so a FIFO is there when the search opens a file its walk listed as regular.
    mkfifo(".fifo");
    await writeFile(path.join(cwd, ".file"), "inside\n");
    swapLoop(`
      const fs = require("node:fs"), path = require("node:path");
      const [cwd] = process.argv.slice(1);
      const at = (n) => path.join(cwd, n);
      for (let i = 0; ; i++) {
        try { fs.unlinkSync(at(".tmp")); } catch {}
        fs.linkSync(at(i % 2 ? ".fifo" : ".file"), at(".tmp"));
        fs.renameSync(at(".tmp"), at("zz.txt"));
      }`);
    for (let i = 0; i < 15; i++) {
      const outcome = await within(
        5_000,
        grepTool.run({ pattern: "inside", glob: "*.txt" }, context()),
      );
      expect(outcome, `search ${i}`).toMatchObject({ ok: true });
    }
  });
});

/** Runs `script` (JavaScript, argv: cwd outside) in a child process until killed. */
function swapLoop(script: string): void {
  swapper = spawn(process.execPath, ["-e", script, cwd, outside], { stdio: "ignore" });
}

describe("the file opened is the file checked", () => {
  it("a symlink swapped between an inside file and an outside one never reads the outside", async () => {
    await symlink(path.join(cwd, "inside.txt"), path.join(cwd, "link"));
    swapLoop(`
      const fs = require("node:fs"), path = require("node:path");
      const [cwd, outside] = process.argv.slice(1);
      const targets = [path.join(cwd, "inside.txt"), path.join(outside, "secret.txt")];
      for (let i = 0; ; i++) {
        const tmp = path.join(cwd, ".link-" + (i % 2));
        try { fs.unlinkSync(tmp); } catch {}
        fs.symlinkSync(targets[i % 2], tmp);
        fs.renameSync(tmp, path.join(cwd, "link"));
      }`);
    const seen = { inside: 0, refused: 0, secret: 0 };
    for (let i = 0; i < 400; i++) {
      const outcome = await readFileTool.run({ path: "link" }, context());
      if (outcome.ok) {
        const { content } = outcome.value as { content: string };
        if (content.includes("SECRET")) seen.secret++;
        else seen.inside++;
      } else seen.refused++;
    }
    expect(seen.secret, JSON.stringify(seen)).toBe(0);
    expect(seen.inside + seen.refused).toBe(400);
  });

  it("a directory swapped for a symlink to outside never reads or writes outside", async () => {
    // sub/ alternates between a real directory (with inside content) and a symlink to outside.
    await mkdir(path.join(cwd, "sub"));
    await writeFile(path.join(cwd, "sub", "secret.txt"), "inside\n");
    await symlink(outside, path.join(cwd, ".sub-link"));
    swapLoop(`
      const fs = require("node:fs"), path = require("node:path");
      const [cwd] = process.argv.slice(1);
      const sub = path.join(cwd, "sub"), real = path.join(cwd, ".sub-real"), link = path.join(cwd, ".sub-link");
      for (;;) {
        try { fs.renameSync(sub, real); fs.renameSync(link, sub); } catch {}
        try { fs.renameSync(sub, link); fs.renameSync(real, sub); } catch {}
      }`);
    const seen = { inside: 0, other: 0, secret: 0 };
    for (let i = 0; i < 400; i++) {
      const read = await readFileTool.run({ path: "sub/secret.txt" }, context());
      if (read.ok && (read.value as { content: string }).content.includes("SECRET")) seen.secret++;
      else if (read.ok) seen.inside++;
      else seen.other++;
      await writeFileTool.run({ path: `sub/new-${i}.txt`, content: "x" }, context());
      await editFileTool.run(
        { path: "sub/secret.txt", old_string: "SECRET", new_string: "EDITED" },
        context(),
      );
    }
    swapper?.kill("SIGKILL");
    expect(seen.secret, JSON.stringify(seen)).toBe(0);
    expect(await readdir(outside)).toEqual(["secret.txt"]);
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("SECRET\n");
  });
});

describe("every tool call races the agent's abort signal", () => {
  const database = useTestDatabase();
  const bus = useBus(() => database().url);

  /** A response's calls run by the runtime itself for a fresh root agent working in `cwd`. */
  async function runResponse(tools: Tool[], calls: { name: string; arguments: string }[]) {
    const agent = await createTree(database().db, { name: "root", prompt: "go", cwd });
    const assistant = await appendEvent(database().db, agent.id, "assistant", "", {});
    const controller = new AbortController();
    const config = loadConfig({ HOME: base, WARREN_MODEL: "fake" });
    const run = runToolCalls(
      {
        db: database().db,
        bus: bus(),
        agent,
        tools: tools as never,
        config,
        assistantEventId: assistant.id,
        signal: controller.signal,
      },
      calls.map((c, i) => ({ id: `call_${i}`, ...c })),
    );
    return { run, controller };
  }

  it("a kill during a call that never returns ends it at once", async () => {
    const hang: Tool = {
      name: "hang",
      description: "never returns",
      parameters: { type: "object", properties: {} },
      run: () => new Promise<ToolOutcome>(() => undefined),
    };
    const { run, controller } = await runResponse([hang], [{ name: "hang", arguments: "{}" }]);
    const settled = run.then(
      () => "resolved",
      (err: unknown) => (err instanceof Error ? err.name : "rejected"),
    );
    await new Promise((r) => setTimeout(r, 300));
    const stoppedAt = Date.now();
    const reason = new Error("killed");
    reason.name = "AbortError";
    controller.abort(reason);
    const end = await Promise.race([
      settled,
      new Promise((r) => setTimeout(() => r("hung"), 2_000)),
    ]);
    expect(end).toBe("AbortError");
    expect(Date.now() - stoppedAt).toBeLessThan(1_000);
  });

  it("twenty calls in one response add no MaxListenersExceededWarning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const calls = Array.from({ length: 20 }, () => ({
        name: "bash",
        arguments: JSON.stringify({ command: "sleep 0.3; echo ok" }),
      }));
      const { run } = await runResponse([bashTool], calls);
      await run;
      // Warnings are emitted on the next tick.
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => /MaxListeners/.test(w))).toEqual([]);
  });
});
