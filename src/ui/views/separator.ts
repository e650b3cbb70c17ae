// The separator above the input: where you are in the tree, `↑parent ←prev [current] →next ↓N`,
// padded with `─` to the width; names shorten, then drop, as the terminal narrows.
import type { AgentRow } from "../../agents/agents.sql.js";
import { shortId } from "../../text/format.js";
import { nameText } from "./agent-text.js";
import type { NavInfo } from "./navigation.js";
import { clipRow, rowWidth, type Row } from "./spans.js";
import { GLYPH } from "./glyphs.js";
import { paintSpans, ROLE, type Line, type Style, type Theme } from "./theme.js";

const RULE: Style = ROLE.faint;
const NEIGHBOUR: Style = ROLE.neighbour;
const CURRENT: Style = ROLE.strong;

/** Detail levels tried in order: name columns of the neighbours, whether the current shows its id. */
const LEVELS: { others: number; current: number; id: boolean }[] = [
  { others: 64, current: 64, id: true },
  { others: 16, current: 32, id: true },
  { others: 8, current: 24, id: true },
  { others: 0, current: 24, id: true },
  { others: 0, current: 16, id: false },
  { others: 0, current: 8, id: false },
];

export function renderSeparator(nav: NavInfo, width: number, theme: Theme): Line {
  let row: Row | undefined;
  for (const level of LEVELS) {
    const candidate = separatorRow(nav, level);
    if (rowWidth(candidate) + 1 <= width) {
      row = candidate;
      break;
    }
  }
  row ??= clipRow(separatorRow(nav, LEVELS[LEVELS.length - 1]!), width);
  const fill = width - rowWidth(row);
  if (fill > 0)
    row = [
      ...row,
      { text: `${fill > 1 ? " " : ""}${GLYPH.rule.repeat(Math.max(0, fill - 1))}`, style: RULE },
    ];
  return paintSpans(theme, row);
}

function separatorRow(nav: NavInfo, level: { others: number; current: number; id: boolean }): Row {
  const name = (agent: AgentRow): string =>
    level.others > 0 ? nameText(agent.name, level.others) : "";
  const part = (arrow: string, agent: AgentRow | undefined): Row =>
    agent ? [{ text: " " }, { text: `${arrow}${name(agent)}`, style: NEIGHBOUR }] : [];
  const current = `${nameText(nav.current.name, level.current)}${level.id ? ` ${shortId(nav.current.id)}` : ""}`;
  const dead = nav.current.state === "dead" ? ` ${GLYPH.dead}` : "";
  return [
    { text: GLYPH.rule.repeat(2), style: RULE },
    ...part(GLYPH.parent, nav.parent),
    ...part(GLYPH.prev, nav.prev),
    { text: " " },
    { text: `[${current}${dead}]`, style: CURRENT },
    ...part(GLYPH.next, nav.next),
    ...(nav.children > 0
      ? [{ text: " " }, { text: `${GLYPH.child}${nav.children}`, style: NEIGHBOUR }]
      : []),
  ];
}
