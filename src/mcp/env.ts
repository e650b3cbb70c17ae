// The environment an MCP server on stdio starts with: a short allowlist of warren's own (what a
// program needs to find itself and its locale) plus the server's `env` from the config. Never the
// rest: DATABASE_URL, API keys and WARREN_* stay in warren. (If the tools' shared environment
// builder lands, tools/shell-env.ts buildToolEnv, this should become a use of it.)
const ALLOWED = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
];

export function serverEnv(
  own: Record<string, string>,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ALLOWED) {
    const value = from[key];
    // A bash function exported through the environment is never passed on.
    if (value !== undefined && !value.startsWith("()")) env[key] = value;
  }
  return { ...env, ...own };
}
