// The environment an MCP server on stdio starts with: the tools' shared allowlist
// (sandbox/env.ts buildToolEnv: never DATABASE_URL, API keys or WARREN_*), then what serverExtraEnv
// adds: in the sandbox, HOME is the server's own state directory (the person's home is read-only
// there, and a server keeps its caches and state under HOME); unconfined, the XDG directories a
// server may keep its state under. Last, the server's `env` from the config.
import { buildToolEnv } from "../sandbox/env.js";

const XDG = ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"];

/** What a server gets beyond the allowlist; `stateDir` set: it runs in the sandbox. */
export function serverExtraEnv(
  own: Record<string, string>,
  stateDir: string | undefined,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  if (stateDir) env.HOME = stateDir;
  else {
    for (const key of XDG) {
      const value = from[key];
      if (value !== undefined) env[key] = value;
    }
  }
  return { ...env, ...own };
}

/** The whole environment of an unconfined server. */
export function serverEnv(
  own: Record<string, string>,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  return { ...buildToolEnv(undefined, from), ...serverExtraEnv(own, undefined, from) };
}
