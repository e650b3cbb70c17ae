// The parts of blessed the TUI uses — the screen, the box and the tag escape — loaded without the
// rest: blessed's main module loads all its 40 widgets (images, video, a file manager, …), some
// 20 ms of start-up before the first frame. Its terminal capabilities are compiled when first used.
// Everything outside the blessed-*.ts files reaches blessed through this file's named functions,
// never its private members (docs/architecture.md, "blessed's patches").
import { createRequire } from "node:module";
import path from "node:path";
import type { BlessedProgram, Widgets } from "blessed";
import { compileTerminfoOnUse, type TputPrototype } from "./blessed-terminfo.js";

const require = createRequire(import.meta.url);

// Patch: Tput.prototype._compile (blessed/lib/tput.js): compile on first use (blessed-terminfo.ts).
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
 * Patch: Program's constructor (blessed/lib/program.js) runs `tmux -V`: a spawn before frame one.
 *
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

/** What this file's functions read of a screen beyond blessed's typings. */
interface ScreenInsides {
  lines: Cells[];
  tput: { brokenACS: boolean };
  program: { _owrite(text: string): unknown; _twrite(text: string): unknown };
}

/** One row of blessed's screen buffer: per cell its attribute and text (a wide character's spare
 * cell holds "\x03"); `dirty` when a render changed it since the last draw. */
export type Cells = [number, string][] & { dirty?: boolean };

const insides = (screen: Widgets.Screen) => screen as unknown as ScreenInsides;

/** The rows of `screen`'s buffer as its last render left them (`Screen.lines`, not public). */
export function screenCells(screen: Widgets.Screen): Cells[] {
  return insides(screen).lines;
}

/**
 * Patch: Tput's brokenACS (blessed/lib/tput.js), which Screen.prototype.draw reads: ACS is garbled.
 *
 * blessed draws "─", "│", … through the terminal's ACS charset unless its terminfo entry is known
 * broken: tmux and some entries get that wrong ("─" shows as "q"); UTF-8 does not.
 */
export function drawLinesAsUtf8(screen: Widgets.Screen): void {
  insides(screen).tput.brokenACS = true;
}

/**
 * Patch: Program.prototype._owrite (blessed/lib/program.js), all output: blink is turned to dim.
 *
 * Wraps the screen's program's `_owrite`, where every byte for the terminal goes, so `filter`
 * sees each write whole: blessed has no dim attribute, so theme.ts turns its blink into dim there.
 */
export function filterOutput(screen: Widgets.Screen, filter: (text: string) => string): void {
  const program = insides(screen).program;
  const write = program._owrite.bind(program);
  program._owrite = (text) => write(filter(text));
}

/**
 * Sends an escape sequence to the terminal itself, through tmux's passthrough when inside tmux:
 * blessed's `Program.prototype._twrite` (lib/program.js), not public.
 */
export function writePassthrough(screen: Widgets.Screen, sequence: string): void {
  insides(screen).program._twrite(sequence);
}

/**
 * Sets a box's content without blanking its cells first: `Element.prototype.setContent`'s
 * `noClear` (lib/widgets/element.js), missing from the typings. The box's render puts every row
 * it shows (blessed-rows.ts keeps the rows it drew last, so a blank one would stay blank).
 */
export function setContentKeepingCells(box: Widgets.BoxElement, content: string): void {
  (box as unknown as { setContent(text: string, noClear: boolean): void }).setContent(
    content,
    true,
  );
}
