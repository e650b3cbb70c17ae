// The parts of blessed the TUI uses — the screen, the box and the tag escape — loaded without the
// rest: blessed's main module loads all its 40 widgets (images, video, a file manager, …), some
// 20 ms of start-up before the first frame.
import { createRequire } from "node:module";
import type { Widgets } from "blessed";

const require = createRequire(import.meta.url);

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
