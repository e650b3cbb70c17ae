// Approval requests as the person sees them: the block in the asking agent's view (the request
// and the keys that answer it), and the marks elsewhere — `? needs approval` on the asking agent,
// `?N` on every ancestor (N descendants are asking), the tree-wide count for the status bar.
import type { AgentRow } from "../../agents/agents.sql.js";
import type { ApprovalRow } from "../../approvals/approvals.sql.js";
import { shownArguments } from "../../approvals/shown.js";
import { shownTreeRule } from "../../policy/tree-rules.js";
import { visibleLines, type VisiblePiece } from "../../text/escape.js";
import { FILE_CHANGE_TOOL } from "../../config/accepted-files.js";
import { clipRow, wrapSpans, type Row } from "./spans.js";
import { GLYPH } from "./glyphs.js";
import { graphemes, graphemeWidth } from "./text-width.js";
import { cleanText, paintSpans, ROLE, type Line, type Span, type Theme } from "./theme.js";

/** What a view needs of a pending request (a row of listPending): its call, not its subject. */
export type ShownApproval = Pick<
  ApprovalRow,
  "id" | "agent_id" | "tool" | "arguments" | "pattern"
> &
  Partial<Pick<ApprovalRow, "subject">>;

/** The key that jumps to the agent with the oldest request (tmux passes it; the input has no use for it). */
export const APPROVAL_KEY = "Ctrl+G";

/** The words the asking agent is marked with. */
export const NEEDS_APPROVAL = "? needs approval";

export interface ApprovalMarks {
  /** Open requests per asking agent, oldest first. */
  own: Map<string, ShownApproval[]>;
  /** Per agent: how many of its descendants have an open request. */
  below: Map<string, number>;
  /** Open requests of the whole tree. */
  total: number;
  /** The oldest request of the tree (the jump key goes to its agent). */
  oldest: ShownApproval | undefined;
}

/** Marks from the tree's agent rows and its pending requests (oldest first). */
export function approvalMarks(
  agents: Iterable<Pick<AgentRow, "id" | "parent_id">>,
  pending: readonly ShownApproval[],
): ApprovalMarks {
  // Nothing asks (the usual case): no pass over a thousand agents.
  if (pending.length === 0)
    return { own: new Map(), below: new Map(), total: 0, oldest: undefined };
  const parentOf = new Map<string, string | null>();
  for (const agent of agents) parentOf.set(agent.id, agent.parent_id);
  const own = new Map<string, ShownApproval[]>();
  for (const request of pending) {
    own.set(request.agent_id, [...(own.get(request.agent_id) ?? []), request]);
  }
  const below = new Map<string, number>();
  for (const asking of own.keys()) {
    const seen = new Set([asking]);
    for (let at = parentOf.get(asking); at && !seen.has(at); at = parentOf.get(at)) {
      seen.add(at);
      below.set(at, (below.get(at) ?? 0) + 1);
    }
  }
  return { own, below, total: pending.length, oldest: pending[0] };
}

/** The spans that mark one agent: `? needs approval` when it asks, `?N` when N below it do. */
export function approvalMark(marks: ApprovalMarks | undefined, agentId: string): Span[] {
  if (!marks) return [];
  const spans: Span[] = [];
  if (marks.own.has(agentId)) spans.push({ text: ` ${NEEDS_APPROVAL}`, style: ROLE.alarm });
  const below = marks.below.get(agentId);
  if (below) spans.push({ text: ` ?${below}`, style: ROLE.alarm });
  return spans;
}

/** "? 2 approvals" for the status bar (empty when none). */
export function approvalCountText(total: number): string {
  return total > 0 ? `? ${total} approval${total === 1 ? "" : "s"}` : "";
}

export interface ApprovalBlockOptions {
  /** The request whose deny reason is being typed in the input. */
  reasonFor?: number;
  /** Rows the block may take (the screen's); a request wider than that says so (see below). */
  room?: number;
}

/** An argument's rows start here; its value's continuation rows (wrapped or a new line) under it. */
const ARG_INDENT = 4;
const VALUE_INDENT = 6;
/** Continuation rows of the answer keys and notices. */
const WRAP_INDENT = 4;

/**
 * A request as rows: `? approval N — TOOL`, then each argument of the stored call (not the
 * one-line subject) as `KEY: VALUE`, every character shown (text/escape.ts visibleLines): a real
 * newline ends its row with the newline mark, an invisible or look-alike character is drawn as
 * its code in the alarm style, and a long value wraps at any character, nothing dropped.
 */
function requestRows(request: ShownApproval, width: number): Row[] {
  const head: Span[] = [
    { text: `? approval ${request.id}`, style: ROLE.alarm },
    { text: ` ${GLYPH.dash} ` },
    ...pieceSpans(visibleLines(request.tool).flat(), ROLE.toolName),
  ];
  // A changed instruction or agent file has no call: its request text (the file and the diff) is it.
  const args =
    request.tool === FILE_CHANGE_TOOL
      ? [{ key: "change", value: request.subject ?? "" }]
      : shownArguments(request.arguments);
  if (args.length === 0) head.push({ text: " (no arguments)", style: ROLE.faint });
  const rows = hardWrap(head, width, WRAP_INDENT);
  for (const arg of args) {
    const lines = visibleLines(arg.value);
    const first: Span[] = [
      { text: " ".repeat(ARG_INDENT) },
      ...pieceSpans(visibleLines(arg.key).flat(), ROLE.strong),
      { text: ": ", style: ROLE.strong },
      ...pieceSpans(lines[0]!),
    ];
    rows.push(...hardWrap(first, width, VALUE_INDENT));
    for (const line of lines.slice(1)) {
      rows.push(
        ...hardWrap([{ text: " ".repeat(VALUE_INDENT) }, ...pieceSpans(line)], width, VALUE_INDENT),
      );
    }
  }
  return rows;
}

/** Pieces as spans: marks (escapes, the newline mark) in the alarm style, text in `style`. */
function pieceSpans(pieces: readonly VisiblePiece[], style?: Span["style"]): Span[] {
  return pieces.map((piece) =>
    piece.mark === "newline"
      ? { text: GLYPH.newline, style: ROLE.alarm }
      : piece.mark
        ? { text: piece.text, style: ROLE.alarm }
        : { text: piece.text, ...(style ? { style } : {}) },
  );
}

/**
 * Spans broken into rows of `width` columns at any character (no word wrap: no space is dropped
 * or moved), each row that goes on ending with the wrap mark (so a space before the break shows),
 * continuation rows indented; an escape is never split across rows when it fits one.
 */
function hardWrap(spans: readonly Span[], width: number, indent: number): Row[] {
  // One column of each row is kept for the wrap mark.
  const w = Math.max(2, width) - 1;
  const pad = indent < w ? indent : 0;
  const rows: Row[] = [];
  let row: Row = [];
  let used = 0;
  const put = (text: string, style: Span["style"], cols: number) => {
    if (used + cols > w && used > pad) {
      row.push({ text: GLYPH.wrap, style: ROLE.faint });
      rows.push(row);
      row = pad ? [{ text: " ".repeat(pad) }] : [];
      used = pad;
    }
    const last = row[row.length - 1];
    if (last && last.style === style) last.text += text;
    else row.push({ text, style });
    used += cols;
  };
  for (const span of spans) {
    const escape = span.style === ROLE.alarm && span.text.startsWith("\\");
    if (escape && span.text.length <= w - pad) {
      put(span.text, span.style, span.text.length);
      continue;
    }
    for (const g of graphemes(span.text)) put(g, span.style, graphemeWidth(g));
  }
  rows.push(row);
  return rows;
}

/**
 * The block above the viewed agent's input: each open request of that agent, whole, then the
 * keys that answer the oldest (or, while a deny reason is typed, how to send it).
 */
export function renderApprovalBlock(
  requests: readonly ShownApproval[],
  width: number,
  theme: Theme,
  options: ApprovalBlockOptions = {},
): Line[] {
  if (requests.length === 0) return [];
  // The whole call, wrapped: `y` and `a` must never approve what the screen cut off.
  const first = requests[0]!;
  if (options.room !== undefined && !approvalFits(requests, width, options.room)) {
    // Taller than the screen: say so rather than show part of it as if it were the whole.
    return wrapSpans(
      [
        { text: `? approval ${first.id}`, style: ROLE.alarm },
        { text: ` ${GLYPH.dash} ` },
        ...pieceSpans(visibleLines(first.tool).flat(), ROLE.toolName),
        {
          text: `: taller than this screen: read it whole with warren approvals, answer with warren approve ${first.id} or warren deny ${first.id}`,
        },
      ],
      width,
      WRAP_INDENT,
    ).map((row) => paintSpans(theme, clipRow(row, width)));
  }
  const rows: Row[] = requests.flatMap((request) => requestRows(request, width));
  const key = (text: string): Span => ({ text, style: ROLE.strong });
  const faint = (text: string): Span => ({ text, style: ROLE.faint });
  const keyRows: Row[] = [];
  if (options.reasonFor !== undefined) {
    keyRows.push([
      faint("  "),
      faint(`deny ${options.reasonFor}: type why (the model reads it) · `),
      key("Enter"),
      faint(" denies (empty: no reason) · "),
      key("Esc"),
      faint(" back"),
    ]);
  } else {
    const more = requests.length > 1 ? ` ${GLYPH.dot} answers ${first.id} first` : "";
    const rule = shownTreeRule(first.pattern);
    // A changed instruction or agent file (runtime/file-changes.ts): accepted, or kept out.
    const change = first.tool === FILE_CHANGE_TOOL;
    keyRows.push(
      ...wrapSpans(
        [
          faint("  "),
          key("y"),
          faint(change ? " accept the change · " : " allow once · "),
          ...(change
            ? []
            : rule
              ? [key("a"), faint(` allow "${cleanText(rule, false)}" for the tree · `)]
              : [faint("(no rule for the tree: the command hides what it runs) · ")]),
          key("n"),
          faint(change ? ` keep it out${more}` : ` deny${more}`),
        ],
        width,
        WRAP_INDENT,
      ),
    );
  }
  const shown = [...rows, ...keyRows];
  return shown.map((row) => paintSpans(theme, clipRow(row, width)));
}

/** The rows the block leaves for other things on a screen of this height. */
export function approvalRoom(height: number): number {
  return Math.max(1, height - 4);
}

/**
 * Does the block show every request whole in `room` rows? When not, the keys that answer it
 * are off (dispatch.ts): a person answers from `warren approvals` instead.
 */
export function approvalFits(
  requests: readonly ShownApproval[],
  width: number,
  room: number,
): boolean {
  let rows = 1;
  for (const request of requests) {
    // So long it cannot fit (a character takes a column or more, nearly always): not wrapped to
    // find out, on every frame. At worst a call of combining marks is sent to warren approvals.
    if (request.arguments.length > 2 * room * width) return false;
    rows += requestRows(request, width).length;
    if (rows > room) return false;
  }
  return true;
}
