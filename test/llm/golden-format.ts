// Golden snapshots of what a model is sent: a recorded request rendered as readable text, with
// ids, the working directory and mail ids normalised; compared exactly, rewritten with
// UPDATE_GOLDEN=1.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { RecordedRequest } from "../support/fake-model.js";

export const GOLDEN_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "golden");

/** Replaces every full id and 8-character short id of a known agent with `<id:NAME>`. */
export function normaliser(agents: Record<string, string>, cwd: string) {
  return (text: string): string => {
    let out = text.split(cwd).join("<cwd>");
    for (const [name, id] of Object.entries(agents)) {
      out = out.split(id).join(`<id:${name}>`).split(id.slice(0, 8)).join(`<id8:${name}>`);
    }
    return out.replace(/"mail_id":\d+/g, '"mail_id":"<n>"');
  };
}

/** A request as a person reads it: one section per message, tool calls spelled out. */
export function renderRequest(
  title: string,
  req: RecordedRequest,
  normalise: (text: string) => string,
): string {
  const { messages: _messages, tools: _tools, ...params } = req.body;
  const lines = [
    `# ${title}`,
    "",
    `params: ${JSON.stringify(params)}`,
    `tools: ${req.tools.join(", ")}`,
  ];
  req.messages.forEach((message, i) => {
    const header = message.tool_call_id
      ? `${message.role} (answers ${message.tool_call_id})`
      : message.role;
    lines.push("", `----- [${i}] ${header} -----`);
    if (message.content !== undefined && message.content !== null) lines.push(message.content);
    for (const call of message.tool_calls ?? []) {
      lines.push(`=> ${call.function.name} ${call.function.arguments}  (id ${call.id})`);
    }
  });
  return normalise(lines.join("\n")) + "\n";
}

/** Compares `actual` with golden/`file` exactly; UPDATE_GOLDEN=1 rewrites the file instead. */
export function expectGolden(file: string, actual: string): void {
  const target = path.join(GOLDEN_DIR, file);
  if (process.env.UPDATE_GOLDEN === "1") {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(target, actual);
    return;
  }
  if (!existsSync(target)) {
    throw new Error(`golden file ${file} is missing; run with UPDATE_GOLDEN=1 to create it`);
  }
  expect(actual, `golden ${file} differs (UPDATE_GOLDEN=1 rewrites it)`).toBe(
    readFileSync(target, "utf8"),
  );
}
