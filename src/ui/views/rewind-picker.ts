// The /rewind picker in the panel's frame (docs/rewind.md): the viewed agent's turns newest
// first, one row each (number, when, files changed, tokens, what started it cut at the end), the
// selected row inverse; then the three ways to rewind; then what will not be undone and y/n.
import { filesText, notUndoneLines } from "../../agents/rewind-lines.js";
import type { TurnInfo } from "../../agents/rewind.js";
import { PERSON } from "../../llm/framing.js";
import { compactNumber } from "../../text/format.js";
import { REWIND_CHOICES, selectedTurn, type RewindPicker } from "../rewind-picker.js";
import { framed } from "./agent-panel.js";
import { GLYPH } from "./glyphs.js";
import { timeText } from "./search-results.js";
import { clipRow, rowWidth, wrapSpans, type Row } from "./spans.js";
import { padToWidth } from "./text-width.js";
import { cleanText, paintSpans, ROLE, type Line, type Span, type Theme } from "./theme.js";

/**
 * The picker's lines for `width`×`height` (inside the frame these lines draw). `running`: the
 * agent is running or waiting now (the confirmation asks to interrupt it first).
 */
export function renderRewindPicker(
  picker: RewindPicker,
  running: boolean,
  now: Date,
  width: number,
  height: number,
  theme: Theme,
): Line[] {
  const rows = Math.max(0, height);
  const { dot, dash } = GLYPH;
  const name = cleanText(picker.agentName, false);
  const count = picker.turns === undefined ? "reading" : `${picker.turns.length} turns`;
  const titles = {
    turns: ` rewind ${name} ${dash} ${count} ${dot} ↑↓ select ${dot} Enter choose ${dot} Esc close `,
    choice: ` rewind ${name} ${dash} ↑↓ or 1-4 ${dot} Enter choose ${dot} Esc back `,
    confirm: ` rewind ${name} ${dash} y rewind ${dot} n back `,
  };
  let body: Row[];
  if (picker.error !== undefined) {
    body = [[{ text: ` ${cleanText(picker.error, false)}`, style: ROLE.alarm }]];
  } else if (picker.turns === undefined) {
    body = [[{ text: ` reading the turns${GLYPH.ellipsis}`, style: ROLE.faint }]];
  } else if (picker.turns.length === 0) {
    body = [[{ text: ` ${name} has no turns to rewind`, style: ROLE.faint }]];
  } else if (picker.step === "turns") {
    body = turnRows(picker.turns, picker.selected, now, width, rows);
  } else {
    const turn = selectedTurn(picker)!;
    body = [turnRow(turn, false, now, width), []];
    if (picker.step === "choice") body.push(...choiceRows(picker.choice, width));
    else body.push(...confirmRows(picker, turn, running, width));
  }
  return framed(body, titles[picker.step], width, rows).map((row) => paintSpans(theme, row));
}

/** The rows around the selected turn (it is kept in view, a third down when it can be). */
function turnRows(
  turns: readonly TurnInfo[],
  selected: number,
  now: Date,
  width: number,
  rows: number,
): Row[] {
  const at = Math.max(0, Math.min(selected, turns.length - 1));
  const start = Math.max(0, Math.min(at - Math.floor(rows / 3), turns.length - rows));
  return turns
    .slice(start, start + rows)
    .map((turn, i) => turnRow(turn, start + i === at, now, width));
}

/** A mail as the model reads it (llm/framing.ts mailText): `<mail from="NAME" id="…">` first. */
const MAIL_HEAD = /^<mail from="([^"]*)"(?: id="[0-9a-f]+")?>\n?/;

/** What started a turn, as its row says it: who, and the first line of the message. */
function startedBy(turn: TurnInfo): { who: Span; text: string } {
  let text = turn.text;
  let who: Span = { text: "person: ", style: ROLE.userGlyph };
  if (turn.startedBy === "mail_in") {
    const head = MAIL_HEAD.exec(text);
    const from = head ? (head[1] === PERSON ? "the person" : head[1]!) : undefined;
    if (head) text = text.slice(head[0].length);
    who = { text: `${GLYPH.mail} mail${from ? ` from ${from}` : ""}: `, style: ROLE.mail };
  }
  const first = text.split("\n").find((line) => line.trim() !== "") ?? "";
  return { who, text: first.trim() };
}

/** `› 12  14:03:22  3 files  1.2k/340 tok  person: the message's first line…` */
function turnRow(turn: TurnInfo, selected: boolean, now: Date, width: number): Row {
  const start = startedBy(turn);
  const faint = (text: string): Span => ({ text, style: ROLE.faint });
  const tokens = `${compactNumber(turn.tokensIn)}/${compactNumber(turn.tokensOut)} tok`;
  const row = clipRow(
    [
      { text: selected ? GLYPH.selected : " ", style: ROLE.strong },
      { text: ` ${String(turn.turn).padStart(4)}  `, style: ROLE.strong },
      faint(`${timeText(turn.at, now).padEnd(12)}  `),
      faint(`${filesText(turn).padEnd(13)}  `),
      faint(`${tokens.padEnd(13)}  `),
      start.who,
      { text: cleanText(start.text, false), ...(turn.rewound ? { style: ROLE.faint } : {}) },
      ...(turn.rewound ? [faint(" (rewound)")] : []),
    ],
    width,
  );
  if (!selected) return row;
  const padded: Row = [...row, { text: padToWidth("", width - rowWidth(row)) }];
  return padded.map((s) => ({ text: s.text, style: { ...s.style, inverse: true } }));
}

function choiceRows(choice: number, width: number): Row[] {
  return REWIND_CHOICES.map((c, i) =>
    clipRow(
      [
        { text: i === choice ? ` ${GLYPH.selected} ` : "   ", style: ROLE.strong },
        { text: `${i + 1} `, style: ROLE.strong },
        { text: c.label, ...(i === choice ? { style: ROLE.strong } : {}) },
      ],
      width,
    ),
  );
}

function confirmRows(picker: RewindPicker, turn: TurnInfo, running: boolean, width: number): Row[] {
  const label = REWIND_CHOICES[picker.choice]?.label ?? "";
  const out: Row[] = [
    [
      {
        text: ` rewind ${cleanText(picker.agentName, false)} to before turn ${turn.turn} (${label})`,
        style: ROLE.strong,
      },
    ],
  ];
  if (picker.notUndone === undefined) {
    out.push([{ text: ` reading what is not undone${GLYPH.ellipsis}`, style: ROLE.faint }]);
    return out;
  }
  const kept = notUndoneLines(picker.notUndone);
  if (kept.length === 0) out.push([{ text: " no mail was sent and no child forked since" }]);
  for (const line of kept) out.push(...wrapSpans([{ text: ` ${line}` }], width, 4));
  out.push([]);
  out.push([
    {
      text: running ? " agent is running: interrupt and rewind? y/n" : " rewind? y/n",
      style: ROLE.alarm,
    },
  ]);
  return out.map((row) => clipRow(row, width));
}
