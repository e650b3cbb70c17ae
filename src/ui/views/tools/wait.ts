// wait's result as what it means: a fan-in as one row per agent with its status glyph (and its
// message), one mail as the mail it is, a timeout in words.
import { describeChanges, type Changes } from "../../../agents/worktree.js";
import { isPerson } from "../../../llm/framing.js";
import { shortId } from "../../../text/format.js";
import { GLYPH } from "../glyphs.js";
import { clipRow, collapseSpans, type Row } from "../spans.js";
import { cleanText, ROLE, type Span, type Style } from "../theme.js";
import {
  finalMark,
  LABEL,
  leadBlock,
  leadRow,
  plural,
  resultFields,
  type AgentNames,
  type ResultView,
} from "./common.js";

/** Rows kept of each message in a fan-in result. */
export const FAN_IN_ROWS = 3;
/** Rows kept of one mail's body. */
export const MAIL_ROWS = 12;

const FAN_IN: Record<string, { glyph: string; style: Style }> = {
  received: { glyph: GLYPH.received, style: ROLE.received },
  idle: { glyph: GLYPH.idle, style: ROLE.idle },
  failed: { glyph: GLYPH.dead, style: ROLE.dead },
  dead: { glyph: GLYPH.dead, style: ROLE.dead },
  running: { glyph: GLYPH.running, style: ROLE.awaited },
};

/**
 * `order` places the agents of a fan-in in the tree's fork order (the order the separator, the
 * panel and the status layer use); agents it does not know keep their place after those it knows.
 */
export function waitResult(
  order: (id: string) => number | undefined = () => undefined,
): ResultView {
  return ({ value, width, names }) => {
    if (!value) return undefined;
    if (Array.isArray(value.results)) return fanInRows(value.results, width, names, order);
    if (typeof value.message === "string") {
      const from = typeof value.from === "string" ? value.from : undefined;
      const name = typeof value.from_name === "string" ? value.from_name : from;
      const who = isPerson(from) ? "human" : `${name} ${shortId(from!)}`;
      const final = value.final === true;
      // A structured result as its fields, beneath (its message is the same value as JSON).
      const fields = resultFields(value.result);
      const head: Span[] = [
        { text: cleanText(`${GLYPH.mail} from ${who}`, false), style: ROLE.mail },
        ...(final ? finalMark() : []),
        { text: fields ? ":" : ": ", style: ROLE.mail },
      ];
      return leadBlock(fields ? `\n${fields}` : value.message, undefined, width, MAIL_ROWS, head);
    }
    if (value.status === "timeout")
      return [leadRow([{ text: "timed out, no mail", style: LABEL }], width)];
    return undefined;
  };
}

function fanInRows(
  results: unknown[],
  width: number,
  names: AgentNames,
  order: (id: string) => number | undefined,
): Row[] {
  const items = results
    .filter((item): item is Record<string, unknown> => !!item && typeof item === "object")
    .map((entry, at) => {
      const id = typeof entry.agent_id === "string" ? entry.agent_id : undefined;
      const rank = id === undefined ? undefined : order(id);
      return { entry, at, rank: rank ?? Number.MAX_SAFE_INTEGER };
    })
    .sort((a, b) => a.rank - b.rank || a.at - b.at);
  const rows: Row[] = [leadRow([{ text: plural(items.length, "agent"), style: LABEL }], width)];
  for (const { entry } of items) {
    const status = typeof entry.status === "string" ? entry.status : "running";
    const look = FAN_IN[status] ?? FAN_IN.running!;
    const id = typeof entry.agent_id === "string" ? ` ${shortId(entry.agent_id)}` : "";
    const known = typeof entry.agent_id === "string" ? names(entry.agent_id) : undefined;
    const name = cleanText(typeof entry.name === "string" ? entry.name : (known ?? "?"), false);
    const head: Span[] = [
      { text: "    " },
      { text: `${look.glyph} `, style: look.style },
      { text: `${name}${id}`, style: ROLE.strong },
    ];
    // A child's final answer, marked beside its name.
    const final = entry.final === true;
    if (final) head.push(...finalMark());
    // An isolated child's edits in its worktree (worktree.ts changesOf), beside its name.
    const changes = entry.changes as Changes | undefined;
    if (changes && typeof changes.files === "number" && changes.files > 0)
      head.push({ text: ` (${describeChanges(changes)})`, style: LABEL });
    if (typeof entry.message === "string") {
      // A structured result as its fields, beneath (its message is the same value as JSON).
      const fields = resultFields(entry.result);
      head.push({ text: fields ? ":" : ": " });
      const body = fields ? `\n${cleanText(fields)}` : cleanText(entry.message.replace(/\s+$/, ""));
      const { rows: kept, hidden } = collapseSpans(
        head,
        body,
        undefined,
        width,
        6,
        // The fields start beneath the name's row: as many of them as a message's rows.
        fields ? FAN_IN_ROWS + 1 : FAN_IN_ROWS,
      );
      rows.push(...kept);
      if (hidden > 0)
        rows.push(
          clipRow([{ text: `      ${GLYPH.ellipsis} ${hidden} more lines`, style: LABEL }], width),
        );
    } else {
      rows.push(clipRow([...head, { text: ` ${status}`, style: look.style }], width));
    }
  }
  return rows;
}
