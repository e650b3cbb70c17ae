// An MCP tools/call result as the model reads it: the text content, the structured content, and a
// one-line placeholder for each image, audio or resource; capped like `bash` output.
import { fail, ok, type ToolOutcome } from "../tools/tool.js";

/** As bash's output (tools/bash.ts): the first and last 14,900 characters, the cut marked. */
const HEAD_CHARS = 14_900;
const TAIL_CHARS = 14_900;

export function capText(text: string): { text: string; truncated: boolean } {
  if (text.length <= HEAD_CHARS + TAIL_CHARS) return { text, truncated: false };
  const cut = text.length - HEAD_CHARS - TAIL_CHARS;
  return {
    text: `${text.slice(0, HEAD_CHARS)}\n[… ${cut} characters cut …]\n${text.slice(-TAIL_CHARS)}`,
    truncated: true,
  };
}

interface ContentItem {
  type?: unknown;
  text?: unknown;
  mimeType?: unknown;
  data?: unknown;
  uri?: unknown;
  resource?: { uri?: unknown; text?: unknown; mimeType?: unknown };
}

function itemText(item: ContentItem): string {
  switch (item.type) {
    case "text":
      return typeof item.text === "string" ? item.text : "";
    case "image":
    case "audio": {
      const size = typeof item.data === "string" ? Math.floor((item.data.length * 3) / 4) : 0;
      return `[${item.type}: ${String(item.mimeType ?? "unknown type")}, ${size} bytes, not shown]`;
    }
    case "resource": {
      const r = item.resource ?? {};
      return `[resource: ${String(r.uri ?? "?")}${r.mimeType ? ` (${String(r.mimeType)})` : ""}, not shown]`;
    }
    case "resource_link":
      return `[resource link: ${String(item.uri ?? "?")}]`;
    default:
      return `[${String(item.type)} content, not shown]`;
  }
}

export function formatResult(result: Record<string, unknown>): ToolOutcome {
  const content = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  let text = content.map(itemText).join("\n");
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) {
    const json = JSON.stringify(structured);
    // Servers often send the same JSON as text too: shown once.
    if (json !== text.trim()) text = text ? `${text}\n${json}` : json;
  }
  // An old-protocol `toolResult` answer.
  if (!content.length && result.toolResult !== undefined) text = JSON.stringify(result.toolResult);
  const capped = capText(text);
  if (result.isError === true) {
    return fail("INTERNAL", `the MCP tool failed: ${capped.text}`);
  }
  return ok({ output: capped.text, ...(capped.truncated ? { truncated: true } : {}) });
}
