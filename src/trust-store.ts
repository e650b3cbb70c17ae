// The person's consent to a project's own files (SPEC §9), remembered per file by its real path
// and the sha256 of its path and content, so a changed file is not trusted again until the person
// trusts it again. Two stores in warren's home, which the bash sandbox hides (sandbox/launch.ts
// hiddenPaths), so an agent cannot trust a file for itself: `trusted-files.json` (settings, skill
// and command files) and `mcp-allowed.json` (mcp/allow.ts). Here, below every layer that asks.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { warrenHome } from "./paths.js";

type Env = Record<string, string | undefined>;

/** A project file's trust key: its real path, its content's key, the store to ask. */
export interface ProjectAllow {
  file: string;
  key: string;
  store: string;
}

interface Store {
  allowed: Record<string, { key: string; at: string }>;
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

/** What changes whenever `store` is written (empty: no store yet); a cache of trust keys on it. */
export function storeStamp(store: string): string {
  try {
    const st = fs.statSync(store);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return "";
  }
}

function readStore(store: string): Store {
  const stamp = storeStamp(store);
  if (!stamp) return { allowed: {} };
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

export function trustStorePath(env: Env = process.env): string {
  return path.join(warrenHome(env), "trusted-files.json");
}

/** `file`'s key in the trusted-files store, as it is now (`content`). */
export function trustGate(file: string, content: string, env: Env): ProjectAllow {
  const real = canonicalFile(file);
  return { file: real, key: allowKey(real, content), store: trustStorePath(env) };
}
