// Opening a file for a file tool so that it cannot be turned into a trap (SPEC §3): only regular
// files are read or written (a FIFO, socket, device or directory is refused at once, never waited
// on: opened O_NONBLOCK, checked on the open descriptor), and the file opened is the file checked
// (the descriptor's own path, /proc/self/fd/N, must lie inside the working directory, so a
// symlink swapped in between the check and the open cannot lead outside). Whatever the working
// directory, warren's secrets are never opened (hidden.ts: by path, resolved path and identity, so
// `..`, links, hard links and renamed parents lead nowhere), and the files that configure warren
// are never written (protected-paths.ts).
import { constants, type Stats } from "node:fs";
import { mkdir, open, readlink, stat, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { hiddenMessage, hiddenSet, isHidden, isHiddenFile } from "./hidden.js";
import { repositoryRoot } from "../paths.js";
import { configEntryOf } from "../sandbox/protected-paths.js";
import {
  allowedPath,
  confinement,
  displayPath,
  isInside,
  realPathOf,
  type Checked,
  type FileToolContext,
} from "./paths.js";

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_NONBLOCK, O_NOFOLLOW, O_NOCTTY } = constants;

/** An open regular file inside the agent's reach. Close it (`handle.close()`) when done. */
export interface OpenedFile {
  handle: FileHandle;
  /** The path as the agent gave it, made absolute (for messages). */
  absolute: string;
  /** How it is shown to the model. */
  shown: string;
  info: Stats;
  /** Created by this call (write_file on a new path). */
  created: boolean;
}

export type OpenMode = "read" | "update" | "write";

/**
 * Where the configuration entries are looked for: the working directory, its repository's root
 * (for an isolated child's worktree, the repository it belongs to as well) and the home
 * directory (`~/.claude`, `~/.codex`), each as given and resolved.
 */
function configBases(cwd: string, realCwd: string): string[] {
  const bases = new Set([path.resolve(cwd), realCwd]);
  const root = repositoryRoot(realCwd);
  if (root) bases.add(root);
  const worktree = /^(.*)\/\.warren\/worktrees\/[^/]+/.exec(realCwd);
  if (worktree?.[1]) bases.add(worktree[1]);
  if (process.env.HOME) bases.add(path.resolve(process.env.HOME));
  return [...bases];
}

/** The configuration entry (e.g. `.claude`) that `absolute` or `real` lies in, or undefined. */
async function configEntry(cwd: string, absolute: string, real: string) {
  const realCwd = await realPathOf(path.resolve(cwd));
  for (const base of configBases(cwd, realCwd)) {
    const entry = configEntryOf(base, absolute) ?? configEntryOf(base, real);
    if (entry) return entry;
  }
  return undefined;
}

function configMessage(given: string, entry: string): string {
  return `"${given}" is in ${entry}, which configures warren (${entry === ".git" ? "the repository's entry" : "read-only to agents"}); the file tools never write it — ask the person to change it`;
}

function refused(code: "INVALID_ARGS" | "NOT_ALLOWED", message: string): Checked<never> {
  return { ok: false, error: { code, message } };
}

/** What a non-regular file is, for the error the model sees. */
function kindOf(info: Stats): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Where the open descriptor really is: its /proc/self/fd link (Linux), else (no /proc) the path
 * checked, accepted only when it still names the very file opened (same device and inode).
 */
async function openedPath(handle: FileHandle, info: Stats, checked: string): Promise<string> {
  const link = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (link !== undefined) return link;
  const now = await stat(checked).catch(() => undefined);
  if (now && now.dev === info.dev && now.ino === info.ino) return checked;
  return "(a file other than the one checked)";
}

/**
 * Opens `given` for a file tool: "read" (read_file, grep's files), "update" (edit_file: read and
 * written in place) or "write" (write_file: an existing file in place, else created with
 * O_EXCL, missing parent directories made first). Never follows a symlink at the last step of
 * the checked real path, never blocks on what is not a regular file.
 */
export async function openChecked(
  ctx: FileToolContext,
  given: string,
  mode: OpenMode,
): Promise<Checked<OpenedFile>> {
  const allowed = await allowedPath(ctx, given);
  if (!allowed.ok) return allowed;
  const absolute = allowed.value;
  const shown = displayPath(ctx.cwd, absolute);
  const root = await confinement(ctx);
  // The real path (symlinks resolved, checked inside by allowedPath); opened with O_NOFOLLOW, so
  // a symlink put in its place since is refused rather than followed.
  const real = await realPathOf(absolute);
  // Resolved again, so checked again: a swap since allowedPath's look may lead elsewhere now.
  if (root !== undefined && !isInside(root, real)) {
    return refused(
      "NOT_ALLOWED",
      `"${given}" leads outside your working directory ${ctx.cwd}; the file tools only reach files inside it`,
    );
  }
  // Whatever the file access: never warren's secrets, never (written) its configuration.
  const hidden = hiddenSet(process.env, ctx.shell?.configPath);
  if (isHidden(hidden, absolute, real)) return refused("NOT_ALLOWED", hiddenMessage(given));
  if (mode !== "read") {
    const entry = await configEntry(ctx.cwd, absolute, real);
    if (entry) return refused("NOT_ALLOWED", configMessage(given, entry));
  }
  const base = O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
  // Errors name the path as given (made absolute), not its resolved form.
  const named = (err: unknown) => {
    if (err instanceof Error && (err as NodeJS.ErrnoException).path === real) {
      (err as NodeJS.ErrnoException).path = absolute;
    }
    throw err;
  };
  let handle: FileHandle | undefined;
  let created = false;
  if (mode === "read") handle = await open(real, O_RDONLY | base).catch(named);
  else if (mode === "update") handle = await open(real, O_RDWR | base).catch(named);
  else {
    handle = await open(real, O_WRONLY | base).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      return named(err);
    });
    if (!handle) {
      const dir = path.dirname(real);
      await mkdir(dir, { recursive: true });
      handle = await open(real, O_WRONLY | O_CREAT | O_EXCL | base, 0o666).catch(named);
      created = true;
    }
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return refused(
        "INVALID_ARGS",
        `${shown} is ${kindOf(info)}; the file tools read and write regular files only`,
      );
    }
    const opened = await openedPath(handle, info, real);
    // The file opened, by identity and real path: not a hard link to a secret, not swapped for one.
    const entry = mode === "read" ? undefined : await configEntry(ctx.cwd, opened, opened);
    if (isHiddenFile(hidden, info) || isHidden(hidden, opened) || entry) {
      await handle.close();
      if (created) await unlink(opened).catch(() => undefined);
      return refused("NOT_ALLOWED", entry ? configMessage(given, entry) : hiddenMessage(given));
    }
    if (root !== undefined) {
      if (!isInside(root, opened)) {
        await handle.close();
        // Made by this call, outside: taken away again (it is empty; nothing was written).
        if (created) await unlink(opened).catch(() => undefined);
        return refused(
          "NOT_ALLOWED",
          `"${given}" changed while it was opened and now leads outside your working directory ${ctx.cwd}; the file tools only reach files inside it`,
        );
      }
    }
    return { ok: true, value: { handle, absolute, shown, info, created } };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** Reads an open file whole, at most `max` bytes (more: undefined), whatever fstat said. */
export async function readAtMost(handle: FileHandle, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (true) {
    const chunk = Buffer.allocUnsafe(Math.min(1 << 20, max + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > max) return undefined;
  }
  return Buffer.concat(chunks, total);
}

/** Replaces an open file's content with `data`, in place (mode, owner and links kept). */
export async function rewrite(handle: FileHandle, data: string | Buffer): Promise<number> {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let at = 0;
  while (at < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at, at);
    at += bytesWritten;
  }
  await handle.truncate(bytes.length);
  return bytes.length;
}
