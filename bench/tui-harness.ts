// The TUI benchmarks' harness: a real blessed screen (startTui) on a fake terminal, keys typed
// into its stdin (at once, or by another process as a terminal would), and frames awaited by
// their text; plus stopping a child process.
import { spawn, type ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import type { AgentRow } from "../src/agents/agents.sql.js";
import type { Bus } from "../src/bus/bus.js";
import type { Db } from "../src/db/client.js";
import { startTui, type Tui } from "../src/ui/app.js";
import { benchConfig } from "./rig.js";
import { nowMs } from "./stats.js";

export const COLS = 120;
export const ROWS = 40;
const FRAME_TIMEOUT_MS = 10_000;

/** A TUI on a fake terminal, with a way to await a frame whose text satisfies a check. */
export interface Harness {
  tui: Tui;
  type(keys: string): void;
  /**
   * Has another process type `key` after `delayMs`, as a person's keystroke arrives: the TUI's
   * thread must wake for it. Resolves with the time (nowMs, one clock for all processes) it was sent.
   */
  typeFromOutside(key: string, delayMs: number): Promise<number>;
  /** Resolves with the time (nowMs) of the first frame, from now on, for which `check` holds. */
  frame(check: (text: string) => boolean, what: string): Promise<number>;
  /** Frames painted so far. */
  frames(): number;
  close(): Promise<void>;
}

export async function openHarness(
  db: Db,
  bus: Bus,
  root: AgentRow,
  modelURL: string,
): Promise<Harness> {
  const stdin = new PassThrough() as PassThrough & { isTTY: boolean };
  stdin.isTTY = false;
  const stdout = new PassThrough() as PassThrough & {
    isTTY: boolean;
    columns: number;
    rows: number;
  };
  Object.assign(stdout, { isTTY: true, columns: COLS, rows: ROWS });
  stdout.resume(); // the bytes go nowhere; the screen buffer is what is read
  const typist = startTypist();
  typist.process.stdout!.pipe(stdin, { end: false });
  let waiters: { check: (text: string) => boolean; resolve: (at: number) => void }[] = [];
  let lastScreen = "";
  let painted = 0;
  const tui = await startTui({
    db,
    bus,
    config: benchConfig(modelURL),
    root,
    env: { NO_COLOR: "1", TERM: "xterm-256color" },
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout: stdout as unknown as NodeJS.WriteStream,
    onFrame: (screenText) => {
      painted++;
      if (waiters.length === 0) return;
      const at = nowMs();
      const text = screenText().join("\n");
      lastScreen = text;
      waiters = waiters.filter((w) => {
        if (!w.check(text)) return true;
        w.resolve(at);
        return false;
      });
    },
  });
  return {
    tui,
    frames: () => painted,
    type: (keys) => void stdin.write(keys),
    typeFromOutside: typist.type,
    frame(check, what) {
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `tui bench: no frame with ${what} within ${FRAME_TIMEOUT_MS} ms; the screen:\n${lastScreen}`,
              ),
            ),
          FRAME_TIMEOUT_MS,
        );
        waiters.push({
          check,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
    },
    async close() {
      await tui.close();
      await stopProcess(typist.process);
    },
  };
}

/** A key typist in a process of its own (see Harness.typeFromOutside). */
function startTypist(): {
  process: ChildProcess;
  type(key: string, delayMs: number): Promise<number>;
} {
  const script = `
    process.on("message", ({ key, delayMs }) => setTimeout(() => {
      const at = Number(process.hrtime.bigint()) / 1e6;
      process.stdout.write(key);
      process.send({ at });
    }, delayMs));
    process.on("SIGINT", () => process.exit(0));`;
  const child = spawn(process.execPath, ["-e", script], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const sent: ((at: number) => void)[] = [];
  child.on("message", (message: { at: number }) => sent.shift()?.(message.at));
  return {
    process: child,
    type: (key, delayMs) =>
      new Promise<number>((resolve) => {
        sent.push(resolve);
        child.send({ key, delayMs });
      }),
  };
}

export async function stopProcess(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.kill("SIGINT");
  const force = setTimeout(() => worker.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(force);
}
