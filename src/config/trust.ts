// A cloned repository is not trusted (SPEC §9): what a project's own files could run or widen —
// `.claude/settings*.json`'s allow rules, env and hooks; its skill and command files (checked in
// skills/sources.ts); `.mcp.json`'s servers — applies only once the person trusted those files as
// they are now (`warren trust`, `/trust`). Remembered per file by its path and content (a changed
// file waits again), in warren's home (the stores live in trust-store.ts, below every layer that
// asks), which the sandbox hides: an agent cannot trust a file for itself. `.mcp.json` keeps its
// own store (mcp/allow.ts, `warren mcp allow`); trusting a folder allows its `.mcp.json` too.
import path from "node:path";
import { allowStorePath } from "../mcp/allow.js";
import {
  allowedEntries,
  canonicalFile,
  forgetAllows,
  isAllowed,
  rememberAllow,
  trustGate,
  trustStorePath,
  watchStores,
  type ProjectAllow,
  type StoreWatch,
} from "../trust-store.js";

export { trustGate, trustStorePath };

type Env = Record<string, string | undefined>;

/** A project file's trust key: its real path, its content's key, the store to ask. */
export type TrustGate = ProjectAllow;

export function isTrusted(gate: TrustGate): boolean {
  return isAllowed(gate);
}

/** Remembers each file as it was read (what the person was shown). */
export function trustFiles(gates: readonly TrustGate[]): void {
  for (const gate of gates) rememberAllow(gate);
}

export interface TrustEntry {
  file: string;
  at: string;
  /** settings: a `.claude/settings*.json`; mcp: a `.mcp.json` allowed. */
  kind: "settings" | "mcp";
}

/** Every file the person trusted (settings files and allowed `.mcp.json` files). */
export function trustedEntries(env: Env = process.env): TrustEntry[] {
  return [
    ...allowedEntries(trustStorePath(env)).map((e) => ({
      file: e.file,
      at: e.at,
      kind: "settings" as const,
    })),
    ...allowedEntries(allowStorePath(env)).map((e) => ({
      file: e.file,
      at: e.at,
      kind: "mcp" as const,
    })),
  ].sort((a, b) => a.file.localeCompare(b.file));
}

/** Forgets every trusted file below `dir` (both stores); returns the files forgotten. */
export function revokeTrust(dir: string, env: Env = process.env): string[] {
  const root = canonicalFile(dir);
  const under = (file: string) => {
    const rel = path.relative(root, file);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  };
  return [
    ...forgetAllows(trustStorePath(env), under),
    ...forgetAllows(allowStorePath(env), under),
  ].sort();
}

/**
 * Calls `onChange` soon after either store changes, whoever wrote it (`warren trust`, `--revoke`,
 * `warren mcp allow` in another shell; `/trust` here): how a running TUI hears of them.
 */
export function watchTrust(env: Env, onChange: () => void): StoreWatch {
  return watchStores([trustStorePath(env), allowStorePath(env)], onChange);
}
