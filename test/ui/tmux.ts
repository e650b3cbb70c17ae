// Drives the real `bin/warren` in a real terminal: a tmux server on its own socket, keys sent with
// send-keys (literal text, key names, raw hex bytes), the screen read with capture-pane and polled
// until what a person would see appears.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { BIN } from "../support/warren.js";

const run = promisify(execFile);

export interface TmuxOptions {
  env: NodeJS.ProcessEnv;
  args?: string[];
  width?: number;
  height?: number;
  cwd?: string;
}

export interface Terminal {
  /** Types text literally (no key names); newlines are sent as Enter would not be: use keys("Enter"). */
  type(text: string): Promise<void>;
  /** tmux key names: "Enter", "C-Up", "Escape", "PPage", "C-c", … */
  keys(...names: string[]): Promise<void>;
  /** Raw bytes, e.g. "\x1b[200~…" for a bracketed paste. */
  raw(bytes: string): Promise<void>;
  /** The visible screen, one string (rows joined by "\n", trailing spaces trimmed). */
  screen(): Promise<string>;
  /** Polls the screen until `expected` matches; returns that screen, or throws with it. */
  waitFor(
    expected: string | RegExp | ((screen: string) => boolean),
    timeoutMs?: number,
  ): Promise<string>;
  /** Polls until `unexpected` no longer matches. */
  waitForGone(unexpected: string | RegExp, timeoutMs?: number): Promise<string>;
  resize(width: number, height: number): Promise<void>;
  /** The screen with its SGR attributes (capture-pane -e), to see colors. */
  styledScreen(): Promise<string>;
  /** What warren wrote to stderr so far. */
  stderr(): string;
  /** The terminal's title as tmux keeps it (escape sequences in output may try to set it). */
  title(): Promise<string>;
  /** How many times the application rang the terminal's bell. */
  bells(): Promise<number>;
  /** Kills the tmux server (and so warren, if it still runs). */
  kill(): Promise<void>;
}

/** Terminals started and not yet killed (for killAllTerminals). */
const live = new Set<Terminal>();

/** Starts warren in a new tmux server; when warren exits, the pane shows `[warren exited N]`. */
export async function startTerminal(options: TmuxOptions): Promise<Terminal> {
  const socket = `warren-test-${randomBytes(5).toString("hex")}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-tmux-"));
  const script = path.join(dir, "run.sh");
  const assignments = Object.entries({ TERM: "xterm-256color", LANG: "C.UTF-8", ...options.env })
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `${key}=${shellQuote(value)}`);
  const command = [process.execPath, BIN, ...(options.args ?? [])].map(shellQuote).join(" ");
  writeFileSync(
    script,
    `#!/bin/sh\ncd ${shellQuote(options.cwd ?? dir)}\nenv -i ${assignments.join(" ")} ${command} 2>${shellQuote(path.join(dir, "stderr"))}\necho "[warren exited $?]"\nsleep 600\n`,
    { mode: 0o755 },
  );
  const tmux = (...args: string[]) => run("tmux", ["-L", socket, "-f", "/dev/null", ...args]);
  await tmux(
    "new-session",
    "-d",
    "-x",
    String(options.width ?? 120),
    "-y",
    String(options.height ?? 40),
    script,
    // Modified keys the application asks for (Shift+Enter as ESC [27;2;13~) reach it.
    ";",
    "set-option",
    "-s",
    "extended-keys",
    "on",
    // Each bell the application rings is counted (bells()).
    ";",
    "set-hook",
    "-g",
    "alert-bell",
    `run-shell "echo bell >> ${path.join(dir, "bells")}"`,
  );
  const socketPath = (await tmux("display-message", "-p", "#{socket_path}")).stdout.trim();
  const screen = async () => {
    const { stdout } = await tmux("capture-pane", "-p", "-t", "0");
    return stdout
      .split("\n")
      .map((line) => line.trimEnd())
      .join("\n");
  };
  const matches = (text: string, expected: string | RegExp | ((s: string) => boolean)) =>
    typeof expected === "string"
      ? text.includes(expected)
      : expected instanceof RegExp
        ? expected.test(text)
        : expected(text);
  const poll = async (ok: (s: string) => boolean, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = await screen();
      if (ok(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}; the screen was:\n${last}`);
  };
  const terminal: Terminal = {
    type: async (text) => void (await tmux("send-keys", "-t", "0", "-l", text)),
    keys: async (...names) => void (await tmux("send-keys", "-t", "0", ...names)),
    raw: async (bytes) => {
      const hex = Buffer.from(bytes, "utf8").toString("hex").match(/../g) ?? [];
      await tmux("send-keys", "-t", "0", "-H", ...hex);
    },
    screen,
    waitFor: (expected, timeoutMs = 15_000) =>
      poll((s) => matches(s, expected), JSON.stringify(String(expected)), timeoutMs),
    waitForGone: (unexpected, timeoutMs = 15_000) =>
      poll(
        (s) => !matches(s, unexpected),
        `${JSON.stringify(String(unexpected))} to go`,
        timeoutMs,
      ),
    resize: async (width, height) =>
      void (await tmux("resize-window", "-t", "0", "-x", String(width), "-y", String(height))),
    styledScreen: async () => (await tmux("capture-pane", "-p", "-e", "-t", "0")).stdout,
    stderr: () => {
      try {
        return readFileSync(path.join(dir, "stderr"), "utf8");
      } catch {
        return "";
      }
    },
    bells: async () => {
      try {
        return readFileSync(path.join(dir, "bells"), "utf8").split("\n").filter(Boolean).length;
      } catch {
        return 0;
      }
    },
    title: async () =>
      (await tmux("display-message", "-p", "-t", "0", "#{pane_title}")).stdout.trim(),
    kill: async () => {
      live.delete(terminal);
      await tmux("kill-server").catch(() => undefined);
      rmSync(socketPath, { force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(terminal);
  return terminal;
}

/** Kills every tmux server this process started and did not kill yet (for afterAll). */
export async function killAllTerminals(): Promise<void> {
  await Promise.all([...live].map((terminal) => terminal.kill()));
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
