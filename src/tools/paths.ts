// Shared by the work tools: path arguments resolved against the agent's cwd, argument checking
// driven by each tool's own JSON schema, and file-system errors turned into error outcomes.
import path from "node:path";
import { textProblem } from "../agents/text.js";
import { fail, internalFailure, type ErrorCode, type ToolOutcome } from "./tool.js";

/** A failed check; directly returnable from `run` as a ToolOutcome. */
export type ArgFailure = { ok: false; error: { code: ErrorCode; message: string } };
export type Checked<T> = { ok: true; value: T } | ArgFailure;

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

export function objectSchema(
  properties: Record<string, Property>,
  required: string[],
): ObjectSchema {
  return { type: "object", properties, required, additionalProperties: false };
}

function invalid(message: string): ArgFailure {
  return { ok: false, error: { code: "INVALID_ARGS", message } };
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/**
 * Checks model-supplied `args` against `schema`; `T` must describe the same shape. Optional
 * arguments given as null count as absent (and are left out of the value).
 */
export function checkArgs<T>(schema: ObjectSchema, args: unknown): Checked<T> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return invalid(`arguments must be a JSON object, got ${typeName(args)}`);
  }
  const given = args as Record<string, unknown>;
  const known = Object.keys(schema.properties);
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(schema.properties, key)) {
      return invalid(`unknown argument "${key}"; expected: ${known.join(", ")}`);
    }
  }
  const value: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(schema.properties)) {
    const arg = given[key];
    if (arg === undefined || arg === null) {
      if (schema.required.includes(key)) {
        return invalid(`missing required argument "${key}" (${prop.type})`);
      }
      continue;
    }
    const problem = checkValue(key, prop, arg);
    if (problem !== undefined) return invalid(problem);
    value[key] = arg;
  }
  return { ok: true, value: value as T };
}

function checkValue(key: string, prop: Property, value: unknown): string | undefined {
  switch (prop.type) {
    case "string":
      if (typeof value !== "string") return `"${key}" must be a string, got ${typeName(value)}`;
      if (textProblem(value) !== undefined) return `"${key}" ${textProblem(value)}`;
      if (prop.minLength !== undefined && value.length < prop.minLength) {
        return `"${key}" must not be empty`;
      }
      return undefined;
    case "integer":
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) {
        return `"${key}" must be a number, got ${typeName(value)}`;
      }
      if (prop.type === "integer" && !Number.isInteger(value)) {
        return `"${key}" must be an integer, got ${value}`;
      }
      if (prop.minimum !== undefined && value < prop.minimum) {
        return `"${key}" must be at least ${prop.minimum}, got ${value}`;
      }
      if (prop.maximum !== undefined && value > prop.maximum) {
        return `"${key}" must be at most ${prop.maximum}, got ${value}`;
      }
      return undefined;
    case "boolean":
      return typeof value === "boolean"
        ? undefined
        : `"${key}" must be a boolean, got ${typeName(value)}`;
  }
}

/** An argument path made absolute: relative paths resolve against the agent's cwd. */
export function resolvePath(cwd: string, given: string): string {
  return path.resolve(cwd, given);
}

/** How a path is shown to the model: relative to cwd when inside it, else absolute. */
export function displayPath(cwd: string, absolute: string): string {
  const rel = path.relative(cwd, absolute);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return absolute;
  return rel.split(path.sep).join("/");
}

/** True when the first 8 KB hold a NUL byte: the usual heuristic for a binary file. */
export function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

/** Maps a thrown file-system error to an outcome the model can act on. */
export function fsFailure(cwd: string, err: unknown): ToolOutcome {
  const e = err instanceof Error ? (err as NodeJS.ErrnoException) : undefined;
  const where = typeof e?.path === "string" ? displayPath(cwd, e.path) : "path";
  switch (e?.code) {
    case "ENOENT":
      return fail("INVALID_ARGS", `no such file or directory: ${where}`);
    case "EISDIR":
      return fail("INVALID_ARGS", `${where} is a directory, not a file`);
    case "ENOTDIR":
      return fail("INVALID_ARGS", `a component of ${where} is not a directory`);
    case "EEXIST":
      return fail("INVALID_ARGS", `${where} already exists and is not a directory`);
    case "EACCES":
    case "EPERM":
      return fail("NOT_ALLOWED", `permission denied: ${where}`);
    default:
      return internalFailure(err);
  }
}

/** Runs a tool body so that nothing escapes as a throw (`run` must never throw). */
export async function guarded(cwd: string, body: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await body();
  } catch (err) {
    return fsFailure(cwd, err);
  }
}
