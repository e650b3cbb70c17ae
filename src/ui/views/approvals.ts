// Approval requests as the person sees them: the block in the asking agent's view (the request
// and the keys that answer it), and the marks elsewhere — `? needs approval` on the asking agent,
// `?N` on every ancestor (N descendants are asking), the tree-wide count for the status bar.
import type { AgentRow } from "../../agents/agents.sql.js";
import type { ApprovalRow } from "../../approvals/approvals.sql.js";
import { FILE_CHANGE_TOOL } from "../../config/accepted-files.js";
import { shownTreeRule } from "../../config/policy.js";
import { clipRow, wrapSpans, type Row } from "./spans.js";
import { GLYPH } from "./glyphs.js";
import { cleanText, paintSpans, ROLE, type Line, type Span, type Theme } from "./theme.js";

/** What a view needs of a pending request (a row of listPending). */
export type ShownApproval = Pick<ApprovalRow, "id" | "agent_id" | "tool" | "subject" | "pattern">;

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

/** Continuation rows of a wrapped request start under its text. */
const WRAP_INDENT = 4;

/**
 * The block above the viewed agent's input: one line per open request of that agent, then the
 * keys that answer the oldest (or, while a deny reason is typed, how to send it).
 */
export function renderApprovalBlock(
  requests: readonly ShownApproval[],
  width: number,
  theme: Theme,
  options: ApprovalBlockOptions = {},
): Line[] {
  if (requests.length === 0) return [];
  // The whole command, wrapped: `y` and `a` must never approve what the screen cut off.
  const rows: Row[] = requests.flatMap((request) =>
    wrapSpans(
      [
        { text: `? approval ${request.id}`, style: ROLE.alarm },
        { text: ` ${GLYPH.dash} ` },
        { text: request.tool, style: ROLE.toolName },
        ...(request.subject ? [{ text: `: ${cleanText(request.subject, false)}` }] : []),
      ],
      width,
      WRAP_INDENT,
    ),
  );
  const first = requests[0]!;
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
  let shown = [...rows, ...keyRows];
  if (options.room !== undefined && !approvalFits(requests, width, options.room)) {
    // Taller than the screen: say so rather than show part of it as if it were the whole.
    shown = wrapSpans(
      [
        { text: `? approval ${first.id}`, style: ROLE.alarm },
        { text: ` ${GLYPH.dash} ` },
        { text: first.tool, style: ROLE.toolName },
        {
          text: `: ${rows.length} rows, taller than this screen: read it whole with warren approvals, answer with warren approve ${first.id} or warren deny ${first.id}`,
        },
      ],
      width,
      WRAP_INDENT,
    );
  }
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
    const text = `? approval ${request.id} ${GLYPH.dash} ${request.tool}: ${cleanText(request.subject, false)}`;
    rows += wrapSpans([{ text }], width, WRAP_INDENT).length;
    if (rows > room) return false;
  }
  return true;
}
