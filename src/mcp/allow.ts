// Which project `.mcp.json` files the person allowed (SPEC §9): one entry per file, keyed by the
// sha256 of its path and its content, so a changed file is not allowed again until it is allowed
// again. Kept in warren's home (`$WARREN_HOME/mcp-allowed.json`), which the bash sandbox hides
// (sandbox/launch.ts hiddenPaths): an agent cannot allow a file for itself.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { warrenHome } from "../paths.js";

type Env = Record<string, string | undefined>;

/** What a project server carries: the file it came from, its content's key, the store to ask. */
export interface ProjectAllow {
  file: string;
  key: string;
  store: string;
}

interface Store {
  allowed: Record<string, { key: string; at: string }>;
}

export function allowStorePath(env: Env = process.env): string {
  return path.join(warrenHome(env), "mcp-allowed.json");
}

/** The file's real path when it exists (a symlink is allowed as what it points at). */
export function canonicalFile(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

export function allowKey(file: string, content: string): string {
  return createHash("sha256").update(`${file}\u0000${content}`).digest("hex");
}

/** Read once per change of the store file (its mtime and size), per thread. */
const cache = new Map<string, { stamp: string; store: Store }>();

function readStore(store: string): Store {
  let stamp: string;
  try {
    const st = fs.statSync(store);
    stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return { allowed: {} };
  }
  const hit = cache.get(store);
  if (hit?.stamp === stamp) return hit.store;
  let parsed: Store = { allowed: {} };
  try {
    const value = JSON.parse(fs.readFileSync(store, "utf8")) as Partial<Store>;
    if (value && typeof value.allowed === "object" && value.allowed !== null) {
      parsed = { allowed: value.allowed };
    }
  } catch {
    // Unreadable or broken: nothing is allowed (the person allows again).
  }
  cache.set(store, { stamp, store: parsed });
  return parsed;
}

export function isAllowed(allow: ProjectAllow): boolean {
  return readStore(allow.store).allowed[allow.file]?.key === allow.key;
}

/** A server that needs no allow (the config's own), or whose file is allowed. */
export function serverAllowed(server: { allow?: ProjectAllow }): boolean {
  return !server.allow || isAllowed(server.allow);
}

/** The servers that may start now. */
export function allowedOnly<T extends { allow?: ProjectAllow }>(
  servers: Record<string, T>,
): Record<string, T> {
  return Object.fromEntries(Object.entries(servers).filter(([, s]) => serverAllowed(s)));
}

/** Remembers `allow` (replacing the file's earlier entry); written whole, then renamed. */
export function rememberAllow(allow: ProjectAllow): void {
  fs.mkdirSync(path.dirname(allow.store), { recursive: true, mode: 0o700 });
  const store = readStore(allow.store);
  const next: Store = {
    allowed: { ...store.allowed, [allow.file]: { key: allow.key, at: new Date().toISOString() } },
  };
  const tmp = `${allow.store}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, allow.store);
  cache.delete(allow.store);
}

/** Every entry of `store` (file → when it was allowed). */
export function allowedEntries(store: string): { file: string; key: string; at: string }[] {
  return Object.entries(readStore(store).allowed).map(([file, v]) => ({ file, ...v }));
}

/** Forgets the entries of the files `which` picks; returns the files forgotten. */
export function forgetAllows(store: string, which: (file: string) => boolean): string[] {
  const current = readStore(store);
  const gone = Object.keys(current.allowed).filter(which);
  if (gone.length === 0) return [];
  const next: Store = {
    allowed: Object.fromEntries(Object.entries(current.allowed).filter(([f]) => !which(f))),
  };
  const tmp = `${store}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, store);
  cache.delete(store);
  return gone;
}
