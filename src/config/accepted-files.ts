// Instruction and agent files reach a prompt only as the person accepted them (SPEC §3, §9): an
// agent can write AGENTS.md or `.warren/agents/x.md` (bash in the sandbox may), so the content
// a prompt carries is the one recorded here — what was there when the person first started warren
// on the project, or a change they accepted since. A file that differs is not used (its accepted
// content is, or nothing for a new file) until the person accepts the change (runtime/
// file-changes.ts asks). Kept in warren's home (`accepted-files.json`), which the sandbox hides
// and the file tools refuse: an agent cannot accept its own change.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { threadId } from "node:worker_threads";
import { warrenHome } from "../paths.js";

type Env = Record<string, string | undefined>;

/** What a file is to warren: it composes prompts (instructions) or is a profile (agent). */
export type GuardedKind = "instructions" | "agent";

interface Accepted {
  /** sha256 of the accepted content; null: accepted as absent (no file there). */
  sha256: string | null;
  content: string | null;
  at: string;
}

interface Store {
  files: Record<string, Accepted>;
  /**
   * Folders whose files were all recorded when the person first started warren there: a file
   * under one with no record is new since, and asked about like a change.
   */
  known: string[];
}

/** A file that differs from what the person accepted. */
export interface FileChange {
  file: string;
  kind: GuardedKind;
  /** The accepted content (null: the file was not there). */
  accepted: string | null;
  /** The content now (null: the file is gone). */
  now: string | null;
  /** sha256 of `now` (null: gone). */
  sha256: string | null;
}

/** What a prompt may use of a file: `use` (null: nothing), and the change when it differs. */
export interface FileView {
  use: string | null;
  change?: FileChange;
}

export function acceptedStorePath(env: Env = process.env): string {
  return path.join(warrenHome(env), "accepted-files.json");
}

export function contentHash(content: string | null): string | null {
  return content === null ? null : createHash("sha256").update(content).digest("hex");
}

/** Read once per change of the store file (its mtime, size and inode), per thread. */
const cache = new Map<string, { stamp: string; store: Store; hashes: Set<string> }>();

function readStore(file: string): { store: Store; hashes: Set<string> } {
  let stamp: string;
  try {
    const st = fs.statSync(file);
    stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return { store: { files: {}, known: [] }, hashes: new Set() };
  }
  const hit = cache.get(file);
  if (hit?.stamp === stamp) return hit;
  let store: Store = { files: {}, known: [] };
  try {
    const value = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Store>;
    store = {
      files: value.files && typeof value.files === "object" ? value.files : {},
      known: Array.isArray(value.known) ? value.known.filter((k) => typeof k === "string") : [],
    };
  } catch {
    // Broken: nothing is accepted, every known folder forgotten (the next start records again).
  }
  const hashes = new Set<string>();
  for (const entry of Object.values(store.files)) if (entry.sha256) hashes.add(entry.sha256);
  const read = { stamp, store, hashes };
  cache.set(file, read);
  return read;
}

/** Changes whenever the store does (what a cached view of it is keyed by). */
export function acceptedStamp(env: Env = process.env): string {
  try {
    const st = fs.statSync(acceptedStorePath(env));
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return "none";
  }
}

function writeStore(file: string, store: Store): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${threadId}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(store, null, 1)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  cache.delete(file);
}

function isUnder(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** Whether warren has recorded what was in `dir` (it, or a folder above it, is known). */
export function isKnown(dir: string, env: Env = process.env): boolean {
  const { store } = readStore(acceptedStorePath(env));
  return store.known.some((k) => isUnder(path.resolve(dir), k));
}

/**
 * What a prompt may use of `file`, whose content is `now` (null: absent). A file outside every
 * known folder and never recorded is used as it is: warren was never started by the person where
 * it lies, so there is nothing to compare it with. The same content accepted at another path
 * counts as accepted (a worktree's checkout of the project's AGENTS.md).
 */
export function viewOf(
  file: string,
  now: string | null,
  kind: GuardedKind,
  env: Env = process.env,
): FileView {
  const { store, hashes } = readStore(acceptedStorePath(env));
  const key = path.resolve(file);
  const record = store.files[key];
  const sha256 = contentHash(now);
  if (record && record.sha256 === sha256) return { use: now };
  if (sha256 !== null && hashes.has(sha256)) return { use: now };
  if (!record && (now === null || !isKnownIn(store, key))) return { use: now };
  const accepted = record?.content ?? null;
  return { use: accepted, change: { file: key, kind, accepted, now, sha256 } };
}

/**
 * The person started warren in a folder nobody recorded yet: what is there now is accepted (each
 * file, read now; null for an absent candidate) and the folders become known. Folders already
 * known are left as they are: a change there is asked about.
 */
export function acceptAtStart(
  folders: readonly string[],
  files: readonly string[],
  env: Env = process.env,
): void {
  const storeFile = acceptedStorePath(env);
  const { store } = readStore(storeFile);
  const fresh = folders.map((f) => path.resolve(f)).filter((f) => !isKnownIn(store, f));
  if (fresh.length === 0) return;
  const at = new Date().toISOString();
  const next: Store = { files: { ...store.files }, known: [...store.known, ...fresh] };
  for (const file of files.map((f) => path.resolve(f))) {
    if (!fresh.some((dir) => isUnder(file, dir)) || next.files[file]) continue;
    const content = readText(file);
    next.files[file] = { sha256: contentHash(content), content, at };
  }
  writeStore(storeFile, next);
}

function isKnownIn(store: Store, dir: string): boolean {
  return store.known.some((k) => isUnder(dir, k));
}

/** The person accepted `content` (null: the file's absence) for `file`. */
export function acceptContent(file: string, content: string | null, env: Env = process.env): void {
  const storeFile = acceptedStorePath(env);
  const { store } = readStore(storeFile);
  const key = path.resolve(file);
  const next: Store = {
    files: {
      ...store.files,
      [key]: { sha256: contentHash(content), content, at: new Date().toISOString() },
    },
    known: store.known,
  };
  writeStore(storeFile, next);
}

/** A regular file's text, or null (absent, unreadable, not a file). */
export function readText(file: string): string | null {
  try {
    if (!fs.statSync(file).isFile()) return null;
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** Forgets what was read (tests). */
export function clearAcceptedCache(): void {
  cache.clear();
}

/** The approval requests that ask the person to accept a change (approvals table, `tool`). */
export const FILE_CHANGE_TOOL = "accept_change";

/** What a change request carries in its `arguments`: the content the person is shown. */
export function changeArguments(change: FileChange): string {
  return JSON.stringify({ file: change.file, kind: change.kind, content: change.now });
}

/**
 * An allowed change request: its content becomes the accepted one (the content shown to the
 * person, not whatever the file holds now: a later change is a change again).
 */
export function acceptRequested(args: string, env: Env = process.env): void {
  let parsed: { file?: unknown; content?: unknown };
  try {
    parsed = JSON.parse(args) as typeof parsed;
  } catch {
    return;
  }
  if (typeof parsed.file !== "string") return;
  const content = typeof parsed.content === "string" ? parsed.content : null;
  acceptContent(parsed.file, content, env);
}
