// How text that comes from other agents is framed for a model: mail in a <mail> tag whose sender
// only warren writes, and a parent's conversation as a quoted block followed by the child's task.
// Pure text functions; the runtime decides where they go.
import type { ChatMessage } from "./model.js";

/**
 * Makes `<tag` and `</tag` inside `text` inert (`<\tag`, `<\/tag`), case-insensitively, so a
 * body can neither close the frame it sits in nor open a new one that claims another sender.
 */
export function neutraliseTag(text: string, tag: string): string {
  return text.replace(new RegExp(`<(\\s*/?\\s*${tag})`, "gi"), "<\\$1");
}

/** An attribute value: quotes and angle brackets can never end the attribute or the tag. */
function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * How mail and wait results name the person (`warren send`, the TUI): a marker no agent's name can
 * spell — a name whose letters fold to `person` (or `human`, `root`, `parent`) is refused however
 * it is bracketed or spelt (agents/text.ts validateName) — so no agent can pass for the person.
 */
export const PERSON = "⟨person⟩";

/** Is this sender (a wait result's `from`) the person? `human` is how older events name them. */
export function isPerson(from: string | null | undefined): boolean {
  return !from || from === PERSON || from === "human";
}

/**
 * A mail as the model reads it. `fromId` null means the person (PERSON). The short id is a
 * valid agent reference, for when two agents share a name.
 */
export function mailText(fromName: string, fromId: string | null, body: string): string {
  const from = fromId
    ? `from="${attribute(fromName)}" id="${fromId.slice(0, 8)}"`
    : `from="${PERSON}"`;
  return `<mail ${from}>\n${neutraliseTag(body, "mail")}\n</mail>`;
}

const QUOTE_TAG = "parent_conversation";

/** One message of a quoted conversation, as plain text. */
function quoteMessage(
  message: ChatMessage,
  speaker: string,
  toolNames: Map<string, string>,
): string {
  switch (message.role) {
    case "system":
      return `[system]\n${message.content}`;
    case "user":
      return `[user]\n${message.content}`;
    case "assistant": {
      const calls = (message.tool_calls ?? []).map(
        (call) => `[${speaker} called ${call.name}] ${call.arguments}`,
      );
      const text = message.content ? [`[${speaker}]\n${message.content}`] : [];
      return [...text, ...calls].join("\n");
    }
    case "tool":
      return `[result of ${toolNames.get(message.tool_call_id) ?? "a tool"}]\n${message.content}`;
  }
}

/** A conversation as plain text: one labelled block per message, `speaker` for the assistant. */
export function transcriptText(speaker: string, messages: ChatMessage[]): string {
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.name);
  }
  return messages.map((m) => quoteMessage(m, speaker, toolNames)).join("\n\n");
}

/**
 * A parent's conversation (without its system prompt) as one user message that reads as a
 * quotation, so the child does not take the parent's turns for its own.
 */
export function quotedConversation(
  parentName: string,
  childName: string,
  messages: ChatMessage[],
): ChatMessage {
  const body = transcriptText(parentName, messages);
  return {
    role: "user",
    content:
      `The conversation of your parent ${parentName} so far, for context only ` +
      `(you are ${childName}, not ${parentName}):\n<${QUOTE_TAG}>\n` +
      `${neutraliseTag(body, QUOTE_TAG)}\n</${QUOTE_TAG}>`,
  };
}

/** How an inherited child's first message starts (after its parent's request, byte for byte). */
export const INHERITED_HEAD = "The conversation above is your parent's, not yours:";

/** Who an inherited child is: after its parent's conversation, where its system prompt would say. */
export interface InheritedIdentity {
  name: string;
  id: string;
  parentName: string;
  parentId: string;
  cwd: string;
  /** The JSON Schema its result must match (fork's output_schema), if any. */
  outputSchema?: Record<string, unknown> | null;
}

/**
 * How a child finishes: one `send` with `final: true` ends its turn at once (its result costs one
 * model request); a reply without tool calls is mailed to the parent as its final answer too.
 */
export const FINISH_PROTOCOL =
  'When it is done, call send with to "parent", the complete result as the message and ' +
  "final: true; that ends your turn (no reply after it is needed). You then sleep until new " +
  "mail wakes you.";

/** What a child with an output schema is told about its result. */
export function outputSchemaText(schema: Record<string, unknown>): string {
  return (
    "Your result must be one JSON value (JSON only, no other text) valid against this JSON " +
    `Schema; a send to your parent that is not is refused with the errors:\n${JSON.stringify(schema)}`
  );
}

/**
 * What the root of `warren -p --output-schema FILE` is told, after its prompt: its final reply is
 * checked against the schema and sent back once with the problems (runtime/headless.ts).
 */
export function rootOutputSchemaText(schema: Record<string, unknown>): string {
  return (
    "Your final reply (the one without tool calls) must be one JSON value (JSON only, no other " +
    "text) valid against this JSON Schema; a reply that is not is sent back to you once with the " +
    `errors:\n${JSON.stringify(schema)}`
  );
}

/** The person's message that sends the root's answer back once (`-p --output-schema`). */
export function outputRepairText(problems: string): string {
  return (
    `Your answer does not match the output schema: ${problems}. Reply with one JSON value ` +
    "(JSON only, no other text) valid against the schema."
  );
}

/**
 * The first message of a child that shares its parent's request as a prefix (SPEC §7): who it now
 * is, that the conversation above was its parent's, the protocol, and its task. The parent's
 * system prompt above names the parent: this message says plainly that the child is not it.
 */
export function inheritedTaskText(who: InheritedIdentity, prompt: string | undefined): string {
  const lines = [
    `${INHERITED_HEAD} your parent ${who.parentName} forked you, a new agent, to do one task, ` +
      "and you see what it saw until then.",
    `Your name: ${who.name}`,
    `Your id: ${who.id}`,
    `Your parent: ${who.parentName} (${who.parentId})`,
    `Your working directory: ${who.cwd}`,
    "",
    `Your job: you are ${who.name}, not ${who.parentName}. Do the task below yourself; do not ` +
      `answer ${who.parentName}'s earlier messages or go on with its other work. ` +
      FINISH_PROTOCOL,
    ...(who.outputSchema ? [outputSchemaText(who.outputSchema)] : []),
  ];
  return prompt === undefined ? lines.join("\n") : [...lines, "", taskText(prompt)].join("\n");
}

/** The first message of a child: its task, marked as such. */
export function taskText(prompt: string): string {
  return `Your task:\n${prompt}`;
}

/** A compaction summary, standing in for the older part of a conversation. */
export function summaryText(summary: string): string {
  return (
    "Summary of your earlier conversation (older messages were replaced by this summary to " +
    `save space):\n<summary>\n${neutraliseTag(summary, "summary")}\n</summary>`
  );
}
