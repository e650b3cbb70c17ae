// Tool results drawn for people, one view per tool in this folder, chosen here. A failure is one
// `⚠ CODE: message` row whatever the tool; a tool without a view (MCP) falls back to compact JSON.
// Each view is a pure function of the event (and its call's arguments); the model's JSON stays in
// the event for --full and `warren log --json`.
import type { EventRow } from "../../../agents/events.sql.js";
import { parseObject, stringOrUndefined } from "../../../text/json.js";
import { GLYPH } from "../glyphs.js";
import type { Row } from "../spans.js";
import { cleanText, ROLE } from "../theme.js";
import { forkResult, killResult, sendResult } from "./agents.js";
import { bashResult } from "./bash.js";
import {
  editFileResult,
  globResult,
  grepResult,
  readFileResult,
  writeFileResult,
} from "./files.js";
import { fallbackResult } from "./fallback.js";
import { leadRow, type AgentNames, type ResultView } from "./common.js";
import { waitResult } from "./wait.js";

export {
  agentRefText,
  finalMark,
  resultFields,
  type AgentNames,
  LEAD,
  INDENT,
  RESULT_ROWS,
} from "./common.js";
export { FAN_IN_ROWS, MAIL_ROWS } from "./wait.js";

/** How the view places agents: the tree's fork order (navigation.ts byAge), by id. */
export type AgentOrder = (id: string) => number | undefined;

function views(order: AgentOrder): Record<string, ResultView> {
  return {
    bash: bashResult,
    read_file: readFileResult,
    write_file: writeFileResult,
    edit_file: editFileResult,
    glob: globResult,
    grep: grepResult,
    fork: forkResult,
    send: sendResult,
    kill: killResult,
    wait: waitResult(order),
  };
}

export interface ResultContext {
  names: AgentNames;
  order?: AgentOrder;
}

/**
 * A tool result's rows, to go beneath its call (`call`: the tool_call event, when the view has it:
 * its arguments complete what some results leave out, as an edit's diff count).
 */
export function resultRows(
  result: EventRow,
  call: EventRow | undefined,
  width: number,
  context: ResultContext,
): Row[] {
  const data = result.data ?? {};
  const value = parseObject(result.content);
  const failure = errorOf(value, data, result.content);
  if (failure) {
    const text = failure.code ? `${failure.code}: ${failure.message}` : failure.message;
    // One row: the code and the first words of the message (the whole of it is in the event).
    return [
      leadRow(
        [{ text: `${GLYPH.warning} ${cleanText(text, false)}`, style: ROLE.error }],
        width,
        ROLE.error,
      ),
    ];
  }
  const tool = stringOrUndefined(data.name) ?? stringOrUndefined(call?.data?.name);
  const view = tool === undefined ? undefined : views(context.order ?? (() => undefined))[tool];
  const input = {
    tool,
    args: call ? argsOf(call) : undefined,
    value,
    content: result.content,
    event: result,
    width,
    names: context.names,
  };
  return view?.(input) ?? fallbackResult(input)!;
}

/** A tool_call event's arguments as an object, when they are one. */
export function argsOf(call: EventRow): Record<string, unknown> | undefined {
  const raw = call.data?.arguments ?? call.data?.args;
  const args = typeof raw === "string" ? parseObject(raw) : raw;
  return args && typeof args === "object" && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : undefined;
}

function errorOf(
  value: Record<string, unknown> | undefined,
  data: Record<string, unknown>,
  content: string,
): { code?: string; message: string } | undefined {
  const err = value?.error;
  if (err && typeof err === "object") {
    const e = err as Record<string, unknown>;
    return { code: stringOrUndefined(e.code), message: stringOrUndefined(e.message) ?? content };
  }
  if (stringOrUndefined(data.code)) return { code: stringOrUndefined(data.code), message: content };
  return undefined;
}
