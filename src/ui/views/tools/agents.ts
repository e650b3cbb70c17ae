// The agent tools' results, each said once: fork as the child it made (name, id, context), kill
// as whom it killed; send's receipt adds nothing to its call's `✉ to …` line, so it draws no row.
import { shortId } from "../../../text/format.js";
import { GLYPH } from "../glyphs.js";
import type { Span } from "../theme.js";
import { cleanText, ROLE } from "../theme.js";
import { agentRefText, LABEL, leadRow, str, type ResultView } from "./common.js";

export const forkResult: ResultView = ({ value, args, width }) => {
  const id = str(value?.agent_id);
  if (!id) return undefined;
  const name = str(value?.name) ?? str(args?.name);
  const spans: Span[] = [
    { text: `${GLYPH.fork} `, style: ROLE.fork },
    { text: name ? `${cleanText(name, false)} ` : "", style: ROLE.strong },
    { text: shortId(id), style: ROLE.strong },
  ];
  const context = str(args?.context) === "fresh" ? "fresh context" : "inherits context";
  const branch = str(value?.branch);
  spans.push({
    text: ` ${context}${branch ? ` · branch ${cleanText(branch, false)}` : ""}`,
    style: LABEL,
  });
  return [leadRow(spans, width)];
};

export const sendResult: ResultView = ({ value }) => (value?.status === "sent" ? [] : undefined);

export const killResult: ResultView = ({ value, width, names }) => {
  if (!Array.isArray(value?.killed)) return undefined;
  const ids = value.killed
    .filter((id): id is string => typeof id === "string")
    .map((id) => (names(id) === undefined ? shortId(id) : agentRefText(id, names)));
  return [leadRow([{ text: `killed ${ids.join(", ") || "none"}` }], width)];
};
