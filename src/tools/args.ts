// Tool arguments checked against the JSON Schema the tool declares to the model, compiled once
// with ajv: the schema the model reads is the one that judges what it sends (no second checker).
// Also compiles and applies output schemas (fork's `output_schema`, `-p --output-schema`).
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { textProblem } from "../agents/text.js";
import type { ErrorCode } from "./tool.js";

type Property =
  | { type: "string"; description: string; minLength?: number }
  | { type: "integer" | "number"; description: string; minimum?: number; maximum?: number }
  | { type: "boolean"; description: string };

export type ObjectSchema = {
  type: "object";
  properties: Record<string, Property>;
  required: string[];
  additionalProperties: false;
};

/** A flat object schema (the work tools'), as offered to the model and checked by checkArgs. */
export function objectSchema(
  properties: Record<string, Property>,
  required: string[],
): ObjectSchema {
  return { type: "object", properties, required, additionalProperties: false };
}

/** A failed check; directly returnable from `run` as a ToolOutcome. */
export type ArgFailure = { ok: false; error: { code: ErrorCode; message: string } };
export type Checked<T> = { ok: true; value: T } | ArgFailure;

// Tool schemas are warren's own: strict mode catches a typo in them. Output schemas are the
// person's or the model's: unknown keywords are annotations there, as JSON Schema says.
const toolAjv = new Ajv({ allErrors: true, strict: true, verbose: true });
const outputAjv = new Ajv({ allErrors: true, strict: false, validateFormats: false });

const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = toolAjv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** At most this many problems are listed in one message (the first ones, in ajv's order). */
const MAX_LISTED = 5;

function typeName(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/** One problem, led by the path of the field it is about (`/timeout must be integer`). */
function describe(error: ErrorObject, schema?: Record<string, unknown>): string {
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
  schema?: Record<string, unknown>,
): string {
  const lines = [...new Set((errors ?? []).map((e) => describe(e, schema)))];
  const more = lines.length > MAX_LISTED ? ` (and ${lines.length - MAX_LISTED} more)` : "";
  return lines.slice(0, MAX_LISTED).join("; ") + more;
}

/** A pattern tool schemas use for "not empty or only spaces" (names, prompts). */
export const NOT_BLANK = "\\S";

/** The first stored-text problem (NUL, lone surrogate) in any string of `value`, with its path. */
function firstTextProblem(value: unknown, at: string): string | undefined {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem === undefined ? undefined : `${at || "/"} ${problem}`;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstTextProblem(value[i], `${at}/${i}`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const found = firstTextProblem(item, `${at}/${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

function invalid(message: string): ArgFailure {
  return { ok: false, error: { code: "INVALID_ARGS", message } };
}

/**
 * Checks model-supplied `args` against the tool's declared `schema`; `T` must describe the same
 * shape. Optional arguments given as null count as absent (models often send them so) and are
 * left out of the value; no arguments at all count as `{}`. Every string must be storable text.
 */
export function checkArgs<T>(schema: object, args: unknown): Checked<T> {
  if (args === undefined) args = {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return invalid(`arguments must be a JSON object, got ${typeName(args)}`);
  }
  const value: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(args)) if (item !== null) value[key] = item;
  const validate = validatorFor(schema);
  if (!validate(value)) return invalid(describeErrors(validate.errors));
  const problem = firstTextProblem(value, "");
  if (problem) return invalid(problem);
  return { ok: true, value: value as T };
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
    const validate = outputAjv.compile(schema as Record<string, unknown>);
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
