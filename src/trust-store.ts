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

/** How long a seen change is let settle (one `warren trust` writes its stores several times). */
const SETTLE_MS = 150;
/** Where a store's directory cannot be watched: each store stat'ed this often, no more. */
export const STORE_POLL_MS = 1_000;

export interface StoreWatch {
  close(): void;
}

/**
 * Calls `onChange` soon after any of `stores` is written, by this process or another (`warren
 * trust` in another shell). Their directory is watched, not the files: a store is replaced by a
 * rename (rememberAllow), which a watch on the old file would miss; events for other files are
 * left alone. A change is let settle, then `onChange` is called once if a store's stamp moved.
 * Where the directory cannot be watched (not there yet, no watches left, the watch failing), each
 * store is stat'ed once a second instead. Never throws, and neither does `onChange` through it.
 */
export function watchStores(stores: readonly string[], onChange: () => void): StoreWatch {
  const stamps = new Map(stores.map((s) => [s, storeStamp(s)]));
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const watchers: fs.FSWatcher[] = [];
  const polled: string[] = [];
  const check = () => {
    timer = undefined;
    if (closed) return;
    let moved = false;
    for (const store of stores) {
      const now = storeStamp(store);
      if (now !== stamps.get(store)) moved = true;
      stamps.set(store, now);
    }
    if (!moved) return;
    try {
      onChange();
    } catch {
      // The caller's to report: a watch goes on.
    }
  };
  // Not pushed back by later events: the first one is answered within SETTLE_MS.
  const settle = () => {
    if (closed || timer) return;
    timer = setTimeout(check, SETTLE_MS);
    timer.unref();
  };
  const poll = (files: readonly string[]) => {
    for (const file of files) {
      if (closed || polled.includes(file)) continue;
      polled.push(file);
      fs.watchFile(file, { interval: STORE_POLL_MS, persistent: false }, settle);
    }
  };
  const byDir = new Map<string, string[]>();
  for (const store of stores) {
    const dir = path.dirname(store);
    byDir.set(dir, [...(byDir.get(dir) ?? []), store]);
  }
  for (const [dir, files] of byDir) {
    const names = new Set(files.map((f) => path.basename(f)));
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        if (!name || names.has(String(name))) settle();
      });
      watcher.on("error", () => {
        watcher.close();
        poll(files);
      });
      watchers.push(watcher);
    } catch {
      poll(files);
    }
  }
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
      for (const file of polled) fs.unwatchFile(file, settle);
    },
  };
}
