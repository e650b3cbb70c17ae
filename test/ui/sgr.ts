// Reads `tmux capture-pane -e -p` output: each visible character with the SGR state it was drawn
// in, and the colors a person could not read (black or white text on the default background,
// gray, blue), for the color tests.

/** A color as SGR sets it: a basic/bright index (0-15), a 256-color index, or RGB. */
export type SgrColor =
  | { kind: "basic"; index: number }
  | { kind: "256"; index: number }
  | { kind: "rgb"; r: number; g: number; b: number };

export interface Cell {
  row: number;
  col: number;
  char: string;
  fg?: SgrColor;
  bg?: SgrColor;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
}

export interface Styled {
  cells: Cell[];
  /** Every SGR parameter list seen, e.g. "1;36". */
  sequences: string[];
}

export function parseStyled(captured: string): Styled {
  const cells: Cell[] = [];
  const sequences: string[] = [];
  let fg: SgrColor | undefined;
  let bg: SgrColor | undefined;
  let bold = false;
  let dim = false;
  let inverse = false;
  captured.split("\n").forEach((line, row) => {
    let col = 0;
    // eslint-disable-next-line no-control-regex
    for (const part of line.split(/(\x1b\[[0-9;:]*m)/)) {
      // eslint-disable-next-line no-control-regex
      const sgr = /^\x1b\[([0-9;:]*)m$/.exec(part);
      if (sgr) {
        sequences.push(sgr[1]!);
        const params = sgr[1]!.split(/[;:]/).map((p) => (p === "" ? 0 : Number(p)));
        for (let i = 0; i < params.length; i++) {
          const p = params[i]!;
          if (p === 0) [fg, bg, bold, dim, inverse] = [undefined, undefined, false, false, false];
          else if (p === 1) bold = true;
          else if (p === 2) dim = true;
          else if (p === 22) [bold, dim] = [false, false];
          else if (p === 7) inverse = true;
          else if (p === 27) inverse = false;
          else if (p >= 30 && p <= 37) fg = { kind: "basic", index: p - 30 };
          else if (p >= 90 && p <= 97) fg = { kind: "basic", index: p - 90 + 8 };
          else if (p === 39) fg = undefined;
          else if (p >= 40 && p <= 47) bg = { kind: "basic", index: p - 40 };
          else if (p >= 100 && p <= 107) bg = { kind: "basic", index: p - 100 + 8 };
          else if (p === 49) bg = undefined;
          else if (p === 38 || p === 48) {
            const color: SgrColor =
              params[i + 1] === 2
                ? { kind: "rgb", r: params[i + 2]!, g: params[i + 3]!, b: params[i + 4]! }
                : { kind: "256", index: params[i + 2]! };
            i += params[i + 1] === 2 ? 4 : 2;
            if (p === 38) fg = color;
            else bg = color;
          }
        }
        continue;
      }
      for (const char of part) {
        cells.push({ row, col, char, fg, bg, bold, dim, inverse });
        col++;
      }
    }
  });
  return { cells, sequences };
}

/** Whether a color is black, white, gray or a blue too dark to read on black. */
export function colorName(color: SgrColor | undefined): string | undefined {
  if (!color) return undefined;
  if (color.kind === "basic") {
    return (
      {
        0: "black",
        4: "blue",
        7: "white",
        8: "gray",
        15: "bright white",
      } as Record<number, string>
    )[color.index];
  }
  if (color.kind === "256") {
    const i = color.index;
    if (i < 16) return colorName({ kind: "basic", index: i });
    if (i === 16) return "black";
    if (i >= 17 && i <= 21) return "dark blue";
    if (i === 231) return "white";
    if (i >= 232 && i <= 243) return "gray";
    if (i >= 244) return "light gray";
    return undefined;
  }
  const { r, g, b } = color;
  if (r < 40 && g < 40 && b < 40) return "black";
  if (r > 215 && g > 215 && b > 215) return "white";
  if (b > 100 && r < 60 && g < 60) return "dark blue";
  return undefined;
}

/**
 * Visible characters a person could not read on a dark or a light theme: text (the foreground,
 * or the background under inverse) in black, white, gray or dark blue where the other side is the
 * terminal's default. Text over a colored background is judged by that pair's own rule: only
 * black/white/gray/blue text is reported.
 */
export function unreadable(styled: Styled): { cell: Cell; why: string }[] {
  const out: { cell: Cell; why: string }[] = [];
  for (const cell of styled.cells) {
    if (cell.char.trim() === "") continue;
    const text = cell.inverse ? cell.bg : cell.fg;
    const back = cell.inverse ? cell.fg : cell.bg;
    const name = colorName(text);
    if (!name) continue;
    // White text on a colored (non-default) background is readable on both themes.
    if ((name === "white" || name === "bright white") && back) continue;
    out.push({ cell, why: `${name} text` });
  }
  return out;
}

/** SGR parameter lists that set a color (foreground or background). */
export function colorSequences(styled: Styled): string[] {
  return styled.sequences.filter((params) =>
    params
      .split(";")
      .map(Number)
      .some((p) => (p >= 30 && p <= 38) || (p >= 40 && p <= 48) || (p >= 90 && p <= 107)),
  );
}

/** A short report of bad cells, grouped by row: "row 28 col 0-40 'tree 1a2b…': black text". */
export function describeCells(bad: { cell: Cell; why: string }[], screen: string): string {
  const rows = new Map<number, { cols: number[]; why: Set<string> }>();
  for (const { cell, why } of bad) {
    const entry = rows.get(cell.row) ?? { cols: [], why: new Set() };
    entry.cols.push(cell.col);
    entry.why.add(why);
    rows.set(cell.row, entry);
  }
  const lines = screen.split("\n");
  return [...rows.entries()]
    .map(([row, { cols, why }]) => {
      const text = [...(lines[row] ?? "")].filter((_, i) => cols.includes(i)).join("");
      return `row ${row} ${JSON.stringify(text)}: ${[...why].join(", ")}`;
    })
    .join("\n");
}
