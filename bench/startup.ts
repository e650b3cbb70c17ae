// Start-up: `warren` (the TUI) until its first frame is on the terminal, `warren ls` and
// `warren --version`, each spawned as a person would run it against a running, migrated database
// with a tree, beside `node -e 0` measured in the same run (the floor any Node program pays). Runs
// alternate so the machine's load drifts over all four alike.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { appendEvent } from "../src/agents/events.js";
import { createTree, forkAgent } from "../src/agents/tree.js";
import { closeDb, createDb } from "../src/db/client.js";
import { escapeControl } from "../src/text/escape.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { nowMs, percentile } from "./stats.js";

const RUNS = 15;
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/warren");
/** The input line's prompt glyph: the first frame has it, nothing written before that does. */
const PROMPT = Buffer.from("❯");
/** A TUI that has not drawn by then is broken, not slow. */
const FRAME_TIMEOUT_MS = 20_000;

/** Milliseconds from spawn to a clean exit, with stderr in the error when it fails. */
function timed(args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = nowMs();
    const child = spawn(process.execPath, args, {
      env,
      stdio: ["ignore", "ignore", "pipe"],
      signal,
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(nowMs() - start);
      else reject(new Error(`${args.join(" ")} exited ${code}: ${stderr.trim()}`));
    });
  });
}

/**
 * Milliseconds from spawn to the first frame of the TUI on `treeId`. util-linux `script` gives it a
 * terminal (sized by stty) and relays the screen through a pipe, read as it arrives (the pipe adds
 * well under a millisecond); then `/exit` is typed and the run waits for the process to end.
 */
function firstFrame(treeId: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  const command = `stty cols 120 rows 40; exec '${process.execPath}' '${BIN}' --tree ${treeId}`;
  return new Promise((resolve, reject) => {
    const start = nowMs();
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
      signal,
    });
    let screen = Buffer.alloc(0);
    let frameMs: number | undefined;
    const timer = setTimeout(() => child.kill("SIGKILL"), FRAME_TIMEOUT_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      if (frameMs !== undefined) return;
      screen = Buffer.concat([screen, chunk]);
      if (screen.includes(PROMPT)) {
        frameMs = nowMs() - start;
        child.stdin!.write("/exit\r");
      }
    });
    child.stdin!.on("error", () => {}); // the TUI may be gone already
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (frameMs !== undefined && code === 0) resolve(frameMs);
      else {
        const shown = escapeControl(screen.toString().slice(-300));
        reject(new Error(`warren (TUI) exited ${code} before a frame: ${shown}`));
      }
    });
  });
}

export async function startup(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const home = mkdtempSync(path.join(os.tmpdir(), "warren-bench-startup-"));
  // Nothing of the developer's own: a temp home and config; a model nobody calls (no mail).
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, "config"),
    WARREN_HOME: path.join(home, "data"),
    DATABASE_URL: url,
    NO_COLOR: "1",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    OPENAI_API_KEY: "bench",
    WARREN_MODEL: "fake-model",
  };
  const node: number[] = [];
  const ls: number[] = [];
  const version: number[] = [];
  const frame: number[] = [];
  try {
    const treeId = await seedTree(url);
    log(`start-up: ${RUNS} runs each of node -e 0, warren --version, warren ls, warren (TUI)`);
    await timed([BIN, "ls"], env, signal); // a warm-up: the file cache holds the modules
    for (let i = 0; i < RUNS; i++) {
      node.push(await timed(["-e", "0"], env, signal));
      version.push(await timed([BIN, "--version"], env, signal));
      ls.push(await timed([BIN, "ls"], env, signal));
      frame.push(await firstFrame(treeId, env, signal));
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const floor = percentile(node, 50);
  return [
    row(
      "warren first frame, p50 (database running)",
      percentile(frame, 50),
      "ms",
      "node -e 0 p50",
      floor,
    ),
    row("warren ls, p50 (database running)", percentile(ls, 50), "ms", "node -e 0 p50", floor),
    row("warren --version, p50", percentile(version, 50), "ms", "node -e 0 p50", floor),
  ];
}

/** A tree of three agents, the root with a short conversation, as a person would reopen it. */
async function seedTree(url: string): Promise<string> {
  const db = createDb(url, { max: 1, applicationName: "warren-bench-startup" });
  try {
    const root = await createTree(db, { model: "fake-model", approve: "all" });
    for (let i = 0; i < 10; i++) {
      await appendEvent(db, root.id, "user", `question ${i}: what does this part of the code do?`);
      await appendEvent(db, root.id, "assistant", `answer ${i}: `.padEnd(400, "lorem ipsum "));
    }
    for (const name of ["reader", "writer"])
      await forkAgent(db, root.id, { name, context: "fresh" });
    return root.id;
  } finally {
    await closeDb(db);
  }
}
