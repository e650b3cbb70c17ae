// The parts of blessed the TUI uses — the screen, the box and the tag escape — loaded without the
// rest: blessed's main module loads all its 40 widgets (images, video, a file manager, …), some
// 20 ms of start-up before the first frame. Its terminal capabilities are compiled when first used.
import { createRequire } from "node:module";
import path from "node:path";
import type { BlessedProgram, Widgets } from "blessed";
import { compileTerminfoOnUse, type TputPrototype } from "./blessed-terminfo.js";

const require = createRequire(import.meta.url);

compileTerminfoOnUse(
  (require("blessed/lib/tput.js") as { prototype: TputPrototype }).prototype,
  path.dirname(require.resolve("blessed/usr/xterm")),
);

/** Each widget module exports its constructor, which also works without `new`. */
const createScreen = require("blessed/lib/widgets/screen.js") as (
  options: Widgets.IScreenOptions,
) => Widgets.Screen;

/** blessed's terminal program (each screen has one). */
const createProgram = require("blessed/lib/program.js") as (
  options: Record<string, unknown>,
) => BlessedProgram;

/**
 * blessed's screen. Inside tmux, blessed's program runs `tmux -V` synchronously as it is made,
 * only to tell tmux 1.x (2015) from later: a process spawned before the first frame. There the
 * program is made as the screen would make it, but with $TMUX out of sight, and is then told it
 * runs in tmux 2 or later before the screen (which sets the terminal up through it) is made.
 */
export function screen(options: Widgets.IScreenOptions): Widgets.Screen {
  const tmux = process.env.TMUX;
  if (tmux === undefined) return createScreen(options);
  delete process.env.TMUX;
  let program: BlessedProgram;
  try {
    // blessed/lib/widgets/screen.js's own options for the program it makes.
    program = createProgram({
      input: options.input,
      output: options.output,
      log: options.log,
      debug: options.debug,
      dump: options.dump,
      terminal: options.terminal,
      resizeTimeout: options.resizeTimeout,
      forceUnicode: options.forceUnicode,
      tput: true,
      buffer: true,
      zero: true,
    });
  } finally {
    process.env.TMUX = tmux;
  }
  Object.assign(program, { tmux: true, tmuxVersion: 2 });
  return createScreen({ ...options, program });
}

export const box = require("blessed/lib/widgets/box.js") as (
  options: Widgets.BoxOptions,
) => Widgets.BoxElement;
/** Escapes `{` and `}` so text shows literally in a tagged box. */
export const escape = (require("blessed/lib/helpers.js") as { escape(text: string): string })
  .escape;
