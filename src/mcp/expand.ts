// Claude Code's `${VAR}` and `${VAR:-default}` in an MCP server entry (SPEC §9): expanded from
// warren's environment in `command`, `args`, `env`, `url` and `headers`, so a `.mcp.json` written
// for Claude Code (`"env": {"TOKEN": "${MY_TOKEN}"}`) gives its server the value, not the text. A
// variable that is not set and has no default leaves the server unusable, as in Claude Code: one
// line naming the variable, rather than a server started with a hole in its command or key.

type Env = Record<string, string | undefined>;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const EXPANDED = ["command", "url"] as const;
const EXPANDED_MAPS = ["env", "headers"] as const;

/** `text` with its references replaced; the names that were missing (no value, no default). */
export function expandVars(text: string, env: Env): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(REFERENCE, (_whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    if (value === "") return "";
    if (!missing.includes(name)) missing.push(name);
    return "";
  });
  return { text: out, missing };
}

/**
 * The entry with its string fields expanded (other keys as they are); throws one line naming the
 * missing variables. `at` names the entry in that line.
 */
export function expandServerEntry(entry: unknown, env: Env, at: string): unknown {
  if (!entry || typeof entry !== "object" || Array.isArray(entry)) return entry;
  const e = { ...(entry as Record<string, unknown>) };
  const missing: string[] = [];
  const one = (value: unknown): unknown => {
    if (typeof value !== "string") return value;
    const done = expandVars(value, env);
    for (const name of done.missing) if (!missing.includes(name)) missing.push(name);
    return done.text;
  };
  for (const key of EXPANDED) if (key in e) e[key] = one(e[key]);
  if (Array.isArray(e.args)) e.args = e.args.map(one);
  for (const key of EXPANDED_MAPS) {
    const map = e[key];
    if (map && typeof map === "object" && !Array.isArray(map)) {
      e[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, one(v)]));
    }
  }
  if (missing.length > 0) {
    const names = missing.map((n) => `\${${n}}`).join(", ");
    throw new Error(
      `${at} uses ${names}, which ${missing.length === 1 ? "is" : "are"} not set in warren's environment and ${missing.length === 1 ? "has" : "have"} no default (\${VAR:-default})`,
    );
  }
  return e;
}
