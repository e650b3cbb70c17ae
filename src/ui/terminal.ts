// The terminal's input side: raw mode, bracketed paste, wheel events and modifyOtherKeys on; stdin
// parsed into key events (keys.ts), a lone ESC told from a sequence cut short by a brief wait.
import {
  createKeyParser,
  MODIFY_KEYS_OFF,
  MODIFY_KEYS_ON,
  MOUSE_OFF,
  MOUSE_ON,
  PASTE_OFF,
  PASTE_ON,
  type KeyEvent,
} from "./keys.js";

/** How long an incomplete escape sequence waits for the rest before it counts as typed. */
const ESCAPE_WAIT_MS = 40;

export interface TerminalInput {
  /** Handles `text` as if typed (keys typed before the TUI was up). */
  type(text: string): void;
  /** Stops reading and turns the modes off again. */
  detach(): void;
}

export function attachTerminal(options: {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  mouseOn: boolean;
  onKey: (key: KeyEvent) => void;
}): TerminalInput {
  const { stdin, stdout, onKey } = options;
  const parser = createKeyParser();
  let escapeTimer: NodeJS.Timeout | undefined;
  const onData = (chunk: string) => {
    clearTimeout(escapeTimer);
    for (const event of parser.feed(chunk)) onKey(event);
    if (parser.pending()) {
      // A lone ESC (or a sequence cut by the terminal): wait briefly for the rest.
      escapeTimer = setTimeout(() => parser.flush().forEach(onKey), ESCAPE_WAIT_MS);
    }
  };
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.on("data", onData);
  stdin.resume();
  stdout.write(PASTE_ON + MODIFY_KEYS_ON + (options.mouseOn ? MOUSE_ON : ""));
  return {
    type: onData,
    detach() {
      clearTimeout(escapeTimer);
      stdin.off("data", onData);
      stdout.write(PASTE_OFF + MOUSE_OFF + MODIFY_KEYS_OFF);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
    },
  };
}
