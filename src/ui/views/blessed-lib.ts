// The parts of blessed the TUI uses — the screen, the box and the tag escape — loaded without the
// rest: blessed's main module loads all its 40 widgets (images, video, a file manager, …), some
// 20 ms of start-up before the first frame. Its terminal capabilities are compiled when first used.
import { createRequire } from "node:module";
import path from "node:path";
import type { Widgets } from "blessed";
import { compileTerminfoOnUse, type TputPrototype } from "./blessed-terminfo.js";

const require = createRequire(import.meta.url);

compileTerminfoOnUse(
  (require("blessed/lib/tput.js") as { prototype: TputPrototype }).prototype,
  path.dirname(require.resolve("blessed/usr/xterm")),
);

/** Each widget module exports its constructor, which also works without `new`. */
export const screen = require("blessed/lib/widgets/screen.js") as (
  options: Widgets.IScreenOptions,
) => Widgets.Screen;
export const box = require("blessed/lib/widgets/box.js") as (
  options: Widgets.BoxOptions,
) => Widgets.BoxElement;
/** Escapes `{` and `}` so text shows literally in a tagged box. */
export const escape = (require("blessed/lib/helpers.js") as { escape(text: string): string })
  .escape;
