// Which project `.mcp.json` files the person allowed (SPEC §9): one entry per file, keyed by the
// sha256 of its path and its content (trust-store.ts), so a changed file is not allowed again until
// it is allowed again. Kept in warren's home (`$WARREN_HOME/mcp-allowed.json`).
import path from "node:path";
import { warrenHome } from "../paths.js";
import { isAllowed, type ProjectAllow } from "../trust-store.js";

export {
  allowedEntries,
  allowKey,
  canonicalFile,
  forgetAllows,
  isAllowed,
  rememberAllow,
  type ProjectAllow,
} from "../trust-store.js";

type Env = Record<string, string | undefined>;

export function allowStorePath(env: Env = process.env): string {
  return path.join(warrenHome(env), "mcp-allowed.json");
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
