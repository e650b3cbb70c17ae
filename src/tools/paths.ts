// Shared by the work tools: path arguments resolved against the agent's cwd (and confined to it),
// and file-system errors as outcomes. (Arguments are checked against each tool's schema: args.ts.)
import { readlink, realpath } from "node:fs/promises";
import path from "node:path";
import type { FileAccess } from "../agents/agents.sql.js";
import type { Checked } from "./args.js";
import { fail, internalFailure, type BaseToolContext, type ToolOutcome } from "./tool.js";

export type { ArgFailure, Checked } from "./args.js";

/** What the file tools get: the base context and how far they may reach. */
export interface FileToolContext extends BaseToolContext {
  /** "cwd" (also when absent): paths leading outside cwd are refused; "any": nothing is. */
  fileAccess?: FileAccess;
}

/** An argument path made absolute: relative paths resolve against the agent's cwd. */
export function resolvePath(cwd: string, given: string): string {
  return path.resolve(cwd, given);
}

/** True when `absolute` is `dir` or lies below it (lexically: resolve symlinks first). */
export function isInside(dir: string, absolute: string): boolean {
  const rel = path.relative(dir, absolute);
  return !(rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

/** How a path is shown to the model: relative to cwd when inside it, else absolute. */
export function displayPath(cwd: string, absolute: string): string {
  if (!isInside(cwd, absolute)) return absolute;
  const rel = path.relative(cwd, absolute);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

/** Symlinks followed while resolving one path before it counts as a loop (Linux's limit). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Where `absolute` really leads: symlinks and ".." resolved, also when its last parts do not
 * exist yet (a file about to be written, below a symlinked directory or a dangling link).
 */
export async function realPathOf(
  absolute: string,
  hops = { left: MAX_SYMLINK_HOPS },
): Promise<string> {
  const real = await realpath(absolute).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = path.dirname(absolute);
  if (parent === absolute) return absolute;
  const candidate = path.join(await realPathOf(parent, hops), path.basename(absolute));
  const link = await readlink(candidate).catch(() => undefined);
  if (link === undefined) return candidate; // missing (or unreadable): the call itself will say
  if (--hops.left < 0) {
    throw Object.assign(new Error(`too many symbolic links: ${absolute}`), {
      code: "ELOOP",
      path: absolute,
    });
  }
  return realPathOf(path.resolve(path.dirname(candidate), link), hops);
}

/** The real directory file tools are confined to; undefined when file access is "any". */
export async function confinement(ctx: FileToolContext): Promise<string | undefined> {
  return ctx.fileAccess === "any" ? undefined : realPathOf(path.resolve(ctx.cwd));
}

/**
 * An argument path made absolute, or NOT_ALLOWED when it leads outside the agent's cwd (through
 * "..", an absolute path or a symlink anywhere along it) and file access is not "any".
 */
export async function allowedPath(ctx: FileToolContext, given: string): Promise<Checked<string>> {
  const absolute = resolvePath(ctx.cwd, given);
  const root = await confinement(ctx);
  if (root === undefined) return { ok: true, value: absolute };
  const real = await realPathOf(absolute);
  if (isInside(root, real)) return { ok: true, value: absolute };
  const how = isInside(path.resolve(ctx.cwd), absolute)
    ? `leads through a symlink to ${real}, outside`
    : "is outside";
  return {
    ok: false,
    error: {
      code: "NOT_ALLOWED",
      message: `"${given}" ${how} your working directory ${ctx.cwd}; the file tools only reach files inside it`,
    },
  };
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
    case "ELOOP":
      return fail("INVALID_ARGS", `too many levels of symbolic links: ${where}`);
    case "ENXIO":
    case "ENODEV":
    case "EAGAIN":
      // A FIFO with no reader, a socket, a device with nothing behind it (opened O_NONBLOCK).
      return fail(
        "INVALID_ARGS",
        `${where} is not a regular file; the file tools read and write regular files only`,
      );
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
