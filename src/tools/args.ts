// Tool arguments checked against the JSON Schema the tool declares to the model, compiled once
// with ajv: the schema the model reads is the one that judges what it sends (no second checker).
import type { Ajv, ValidateFunction } from "ajv";
import { textProblem } from "../agents/text.js";
import { describeErrors, newAjv, NOT_BLANK, typeName } from "../text/json-schema.js";
import type { BaseToolContext, ErrorCode, Tool, ToolOutcome } from "./tool.js";

export { NOT_BLANK };
export { checkResult, compileOutputSchema } from "../text/json-schema.js";

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

/** A string argument that may not be empty. */
export function nonEmptyString(description: string): Property {
  return { type: "string", minLength: 1, description };
}

/** The `timeout` of a call that blocks (wait, task_claim): seconds, 0 to check without waiting. */
export function waitTimeout(description: string): Property {
  return { type: "number", minimum: 0, description };
}

/** The `path` argument of the tools that read or write one file. */
export const FILE_PATH = nonEmptyString(
  "File path, relative to your working directory or absolute.",
);

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

// Tool schemas are warren's own: strict mode catches a typo in them.
let toolAjvOnce: Ajv | undefined;
const toolAjv = (): Ajv =>
  (toolAjvOnce ??= newAjv({ allErrors: true, strict: true, verbose: true }));

const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = toolAjv().compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

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

/**
 * A tool whose `run` gets its arguments checked (checkArgs against its `parameters`), typed as
 * `A`: arguments that do not fit are the call's INVALID_ARGS result, and `run` is not called.
 */
export function checkedTool<A, C extends BaseToolContext>(
  tool: Omit<Tool<C>, "run"> & { run(args: A, ctx: C): Promise<ToolOutcome> },
): Tool<C> {
  return {
    ...tool,
    run: async (args, ctx) => {
      const checked = checkArgs<A>(tool.parameters, args);
      return checked.ok ? tool.run(checked.value, ctx) : checked;
    },
  };
}
