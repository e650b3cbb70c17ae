// The environment an MCP server on stdio starts with: the tools' shared allowlist
// (sandbox/env.ts buildToolEnv: never DATABASE_URL, API keys or WARREN_*), plus the XDG
// directories a server may keep its state under, plus the server's `env` from the config.
import { buildToolEnv } from "../sandbox/env.js";

const XDG = ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"];

export function serverEnv(
  own: Record<string, string>,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env = buildToolEnv(undefined, from);
  for (const key of XDG) {
    const value = from[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...own };
}
