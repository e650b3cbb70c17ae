// YAML front matter of a Markdown file (skills, command files): the fields as data and the body,
// or a one-line problem with its line in the file. A file without front matter is all body
// (Claude Code's command files may have none).
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

/**
 * The YAML parser, loaded on the first file that has front matter (~290 KB of code that a start
 * without skills or commands never needs). Required: the loaders are synchronous.
 */
let yaml: typeof Yaml | undefined;
const loadYaml = () => (yaml ??= createRequire(import.meta.url)("yaml") as typeof Yaml);

export type FrontMatter =
  | {
      ok: true;
      data: Record<string, unknown>;
      body: string;
      hasFrontMatter: boolean;
    }
  | { ok: false; line: number; message: string };

export function parseFrontMatter(raw: string): FrontMatter {
  const text = raw.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const open = /^---[ \t]*\n/.exec(text);
  if (!open) return { ok: true, data: {}, body: text, hasFrontMatter: false };
  const close = /^---[ \t]*$/m.exec(text.slice(open[0].length));
  if (!close) return { ok: false, line: 1, message: "the front matter has no closing --- line" };
  // `argument-hint: [pr-number] [priority]` is how Claude Code's docs write it, which YAML reads
  // as a list (or not at all): the line is taken as written (quotes removed), never parsed.
  const hints: string[] = [];
  const yamlText = text
    .slice(open[0].length, open[0].length + close.index)
    .replace(/^argument-hint:[ \t]*(.*)$/gm, (_line, value: string) => {
      hints.push(value.trim().replace(/^(["'])(.*)\1$/, "$2"));
      return "";
    });
  const body = text.slice(open[0].length + close.index + close[0].length).replace(/^\n/, "");
  const { LineCounter, parseDocument, isMap } = loadYaml();
  const lines = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    // The front matter starts on the file's line 2.
    const line = lines.linePos(error.pos[0]).line + 1;
    return { ok: false, line, message: `invalid front matter: ${error.message.split("\n")[0]}` };
  }
  const hint = hints.length > 0 && hints[0] ? { "argument-hint": hints[0] } : {};
  if (doc.contents === null) return { ok: true, data: hint, body, hasFrontMatter: true };
  if (!isMap(doc.contents)) {
    return { ok: false, line: 2, message: "the front matter must be a YAML mapping of fields" };
  }
  const data = { ...(doc.toJS() as Record<string, unknown>), ...hint };
  return { ok: true, data, body, hasFrontMatter: true };
}

/** A field that must be a non-empty string: the trimmed text, undefined when absent, null when bad. */
export function stringField(data: Record<string, unknown>, key: string): string | undefined | null {
  const value = data[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "string" && value.trim() ? value.trim() : null;
}
