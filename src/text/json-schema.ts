// JSON Schema through ajv, for values people and models give: one-line problem lists led by each
// bad field's path, and output schemas (fork's `output_schema`, `-p --output-schema`) compiled
// once and applied to a result text. Tool arguments use the same wording (tools/args.ts).
import { createRequire } from "node:module";
import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv";

// Output schemas are the person's or the model's: unknown keywords are annotations there, as
// JSON Schema says.
let ajvClass: typeof Ajv | undefined;

/**
 * A new ajv, the package loaded on first use: the modules that send mail (and so check output
 * schemas) are in the TUI's first frame, which must not wait for ajv (test/cli/bundle.test.ts).
 */
export function newAjv(options: Options): Ajv {
  ajvClass ??= (createRequire(import.meta.url)("ajv") as { Ajv: typeof Ajv }).Ajv;
  return new ajvClass(options);
}

let outputAjvOnce: Ajv | undefined;
const outputAjv = (): Ajv =>
  (outputAjvOnce ??= newAjv({ allErrors: true, strict: false, validateFormats: false }));

/** The pattern of a "not blank" string (names, prompts): its errors read "must not be blank". */
export const NOT_BLANK = "\\S";

/** At most this many problems are listed in one message (the first ones, in ajv's order). */
const MAX_LISTED = 5;

export function typeName(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/** One problem, led by the path of the field it is about (`/timeout must be integer`). */
function describe(error: ErrorObject, schema?: object): string {
  const at = error.instancePath || "";
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${at}/${String(params.missingProperty)} is required`;
    case "additionalProperties": {
      const known = knownKeys(error.parentSchema ?? (at === "" ? schema : undefined));
      const expected = known ? `; expected: ${known.join(", ") || "no arguments"}` : "";
      return `${at}/${String(params.additionalProperty)} is not a known field${expected}`;
    }
    case "enum":
      return `${at || "/"} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "pattern":
      return at.length > 0 && error.parentSchema?.pattern === NOT_BLANK
        ? `${at} must not be blank`
        : `${at || "/"} ${error.message ?? "is invalid"}`;
    default:
      return `${at || "/"} ${error.message ?? "is invalid"}`;
  }
}

function knownKeys(schema: unknown): string[] | undefined {
  const props = (schema as { properties?: unknown } | undefined)?.properties;
  return props && typeof props === "object" ? Object.keys(props) : undefined;
}

/** The problems ajv found, one line: `/a must be integer; /b is required`. */
export function describeErrors(
  errors: readonly ErrorObject[] | null | undefined,
  schema?: object,
): string {
  const lines = [...new Set((errors ?? []).map((e) => describe(e, schema)))];
  const more = lines.length > MAX_LISTED ? ` (and ${lines.length - MAX_LISTED} more)` : "";
  return lines.slice(0, MAX_LISTED).join("; ") + more;
}

/** A compiled output schema, or why ajv refused it (one line). */
export type CompiledSchema =
  { ok: true; validate: ValidateFunction } | { ok: false; error: string };

const outputCompiled = new Map<string, ValidateFunction>();
const MAX_OUTPUT_SCHEMAS = 256;

/** Compiles a person's or model's JSON Schema (cached by its text: forks repeat schemas). */
export function compileOutputSchema(schema: unknown): CompiledSchema {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    if (typeof schema !== "boolean") {
      return { ok: false, error: `a JSON Schema must be an object, got ${typeName(schema)}` };
    }
  }
  const key = JSON.stringify(schema);
  const cached = outputCompiled.get(key);
  if (cached) return { ok: true, validate: cached };
  try {
    const validate = outputAjv().compile(schema as Record<string, unknown>);
    if (outputCompiled.size >= MAX_OUTPUT_SCHEMAS) outputCompiled.clear();
    outputCompiled.set(key, validate);
    return { ok: true, validate };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `invalid JSON Schema: ${message.split("\n")[0]}` };
  }
}

/** What a result text is against an output schema: its parsed value, or the problems. */
export type ResultCheck = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses `text` as one JSON value and validates it against `schema` (already compiled once). */
export function checkResult(schema: unknown, text: string): ResultCheck {
  const compiled = compileOutputSchema(schema);
  if (!compiled.ok) return compiled;
  let value: unknown;
  try {
    value = JSON.parse(stripFence(text));
  } catch {
    return { ok: false, error: "the message is not one JSON value (it must be JSON only)" };
  }
  if (!compiled.validate(value)) {
    return { ok: false, error: describeErrors(compiled.validate.errors) };
  }
  return { ok: true, value };
}

/** A model often wraps JSON in a ```json fence: the value inside counts. */
function stripFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return fenced ? fenced[1]! : text;
}
