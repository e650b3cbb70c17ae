// Reading the JSON that events carry (tool results, mail) for display: forgiving, never throwing.

/** The JSON object `text` holds, or undefined (not JSON, or not an object). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
