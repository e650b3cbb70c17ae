// Results of the agent tools a person reads most, shown as what they mean rather than JSON: a
// wait's mail or fan-in (one row per agent with its status glyph), a send's, fork's or kill's receipt.
import { describeChanges, type Changes } from "../../agents/worktree.js";
import { shortId } from "../../text/format.js";
import { GLYPH } from "./glyphs.js";
import { clipRow, collapseSpans, type Row } from "./spans.js";
import { cleanText, ROLE, type Span, type Style } from "./theme.js";
import { isPerson } from "../../llm/framing.js";

/** The name of an agent of the tree by id, when the view knows it. */
export type AgentNames = (id: string) => string | undefined;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An agent reference as a person reads it: a known id as "name 1a2b3c4d", anything else as is. */
export function agentRefText(ref: string, names: AgentNames): string {
  const name = UUID.test(ref) ? names(ref.toLowerCase()) : undefined;
  return name === undefined ? cleanText(ref, false) : `${cleanText(name, false)} ${shortId(ref)}`;
}

/** Rows kept of each message in a fan-in result. */
export const FAN_IN_ROWS = 3;

const FAN_IN: Record<string, { glyph: string; style: Style }> = {
  received: { glyph: GLYPH.received, style: ROLE.received },
  idle: { glyph: GLYPH.idle, style: ROLE.idle },
  dead: { glyph: GLYPH.dead, style: ROLE.dead },
  running: { glyph: GLYPH.running, style: ROLE.awaited },
};

const ARROW: Span = { text: `${GLYPH.result} `, style: ROLE.call };
const LABEL: Style = ROLE.faint;

/**
 * The rows of a known tool's result, or undefined to show the text as it is. `mailRows` lays out
 * a mail label and body the way mail events are shown; `names` names the agents it knows.
 */
export function knownResultRows(
  tool: string | undefined,
  value: Record<string, unknown>,
  width: number,
  mailRows: (label: string, body: string, width: number) => Row[],
  names: AgentNames = () => undefined,
): Row[] | undefined {
  if (tool === "wait") {
    if (Array.isArray(value.results)) return fanInRows(value.results, width, names);
    if (typeof value.message === "string") {
      const from = typeof value.from === "string" ? value.from : undefined;
      const name = typeof value.from_name === "string" ? value.from_name : from;
      const who = isPerson(from) ? "human" : `${name} ${shortId(from!)}`;
      return mailRows(`${GLYPH.result} ${GLYPH.mail} from ${who}: `, value.message, width);
    }
    if (value.status === "timeout") {
      return [
        clipRow([ARROW, { text: "wait: ", style: LABEL }, { text: "timed out, no mail" }], width),
      ];
    }
  }
  if (tool === "fork" && typeof value.agent_id === "string") {
    const name = typeof value.name === "string" ? `${cleanText(value.name, false)} ` : "";
    const row: Row = [
      ARROW,
      { text: "fork: ", style: LABEL },
      { text: `${name}${shortId(value.agent_id)}` },
    ];
    return [clipRow(row, width)];
  }
  if (tool === "kill" && Array.isArray(value.killed)) {
    const ids = value.killed
      .filter((id): id is string => typeof id === "string")
      .map((id) => (names(id) === undefined ? shortId(id) : agentRefText(id, names)));
    const row: Row = [
      ARROW,
      { text: "kill: ", style: LABEL },
      { text: `killed ${ids.join(", ") || "none"}` },
    ];
    return [clipRow(row, width)];
  }
  if (tool === "send" && value.status === "sent" && typeof value.to === "string") {
    const name = typeof value.to_name === "string" ? `${cleanText(value.to_name, false)} ` : "";
    const row: Row = [
      ARROW,
      { text: "send: ", style: LABEL },
      { text: `sent to ${name}${shortId(value.to)}` },
    ];
    return [clipRow(row, width)];
  }
  return undefined;
}

function fanInRows(results: unknown[], width: number, names: AgentNames): Row[] {
  const rows: Row[] = [
    clipRow([ARROW, { text: `wait: ${results.length} agents`, style: LABEL }], width),
  ];
  for (const item of results) {
    if (!item || typeof item !== "object") continue;
    const entry = item as Record<string, unknown>;
    const status = typeof entry.status === "string" ? entry.status : "running";
    const look = FAN_IN[status] ?? FAN_IN.running!;
    const id = typeof entry.agent_id === "string" ? ` ${shortId(entry.agent_id)}` : "";
    const known = typeof entry.agent_id === "string" ? names(entry.agent_id) : undefined;
    const name = cleanText(typeof entry.name === "string" ? entry.name : (known ?? "?"), false);
    const head: Span[] = [
      { text: "  " },
      { text: `${look.glyph} `, style: look.style },
      { text: `${name}${id}`, style: ROLE.strong },
    ];
    // An isolated child's edits in its worktree (worktree.ts changesOf), beside its name.
    const changes = entry.changes as Changes | undefined;
    if (changes && typeof changes.files === "number" && changes.files > 0)
      head.push({ text: ` (${describeChanges(changes)})`, style: LABEL });
    if (typeof entry.message === "string") {
      head.push({ text: ": " });
      const body = cleanText(entry.message.replace(/\s+$/, ""));
      const { rows: kept, hidden } = collapseSpans(head, body, undefined, width, 4, FAN_IN_ROWS);
      rows.push(...kept);
      if (hidden > 0)
        rows.push(
          clipRow([{ text: `    ${GLYPH.ellipsis} ${hidden} more lines`, style: LABEL }], width),
        );
    } else {
      rows.push(clipRow([...head, { text: ` ${status}`, style: look.style }], width));
    }
  }
  return rows;
}
