// The environment a command warren runs for an agent gets (bash, hooks, MCP servers): an
// allowlist of the person's ordinary variables plus the config's `shell_env`, never warren's own
// secrets (the database URL, PG* settings, API keys, WARREN_*). An agent that runs
// `env` learns nothing it could connect to warren's database or model server with.

type Env = Record<string, string | undefined>;

/** What the config adds: `shell_env: {set: {NAME: value}, pass: [NAME]}`. */
export interface ShellEnvConfig {
  set: Record<string, string>;
  pass: string[];
}

export const EMPTY_SHELL_ENV: ShellEnvConfig = { set: {}, pass: [] };

/** Passed through when set: what a shell and the usual tools need to behave as in a terminal. */
const ALLOWED = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "FORCE_COLOR",
  "TZ",
  "TMPDIR",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "HOSTNAME",
]);
/** Passed through by prefix (locale settings). */
const ALLOWED_PREFIXES = ["LC_"];

/**
 * warren's own secrets and settings: never given to a command, even when the config names them.
 * `DATABASE_URL` (and anything ending in it, e.g. TEST_DATABASE_URL), libpq's `PG*` variables
 * (PGPASSWORD, PGHOST, PGPASSFILE, PGSERVICEFILE…), every `*_API_KEY`, the model server's
 * `OPENAI_*` / `ANTHROPIC_*`, and `WARREN_*`.
 */
export function forbiddenReason(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (upper.endsWith("DATABASE_URL")) return "a database URL";
  if (upper.startsWith("PG")) return "a PostgreSQL client setting (PG*)";
  if (upper.endsWith("_API_KEY") || upper === "API_KEY") return "an API key";
  if (upper.startsWith("OPENAI_") || upper.startsWith("ANTHROPIC_")) {
    return "a model server setting";
  }
  if (upper.startsWith("WARREN_")) return "warren's own setting";
  return undefined;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks the config's `shell_env` and returns it typed; throws an Error with one line naming the
 * offending key (config.ts turns it into a ConfigError).
 */
export function validateShellEnv(value: unknown, name = "shell_env"): ShellEnvConfig {
  if (value === undefined || value === null) return EMPTY_SHELL_ENV;
  const usage = `${name} must be {"set": {"NAME": "value"}, "pass": ["NAME"]}`;
  if (typeof value !== "object" || Array.isArray(value)) throw new Error(usage);
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => k !== "set" && k !== "pass");
  if (unknown !== undefined) throw new Error(`${usage}; unknown field "${unknown}"`);
  const checkName = (key: string, where: string) => {
    if (!NAME.test(key)) throw new Error(`${where}: "${key}" is not a variable name`);
    const why = forbiddenReason(key);
    if (why !== undefined) {
      throw new Error(
        `${where}: ${key} is ${why}; warren never gives its own secrets to the commands it runs`,
      );
    }
  };
  const set: Record<string, string> = {};
  if (fields.set !== undefined) {
    if (!fields.set || typeof fields.set !== "object" || Array.isArray(fields.set)) {
      throw new Error(`${name}.set must be an object of {"NAME": "value"}`);
    }
    for (const [key, v] of Object.entries(fields.set as Record<string, unknown>)) {
      checkName(key, `${name}.set`);
      if (typeof v !== "string") throw new Error(`${name}.set.${key} must be a string`);
      set[key] = v;
    }
  }
  const pass: string[] = [];
  if (fields.pass !== undefined) {
    if (!Array.isArray(fields.pass)) throw new Error(`${name}.pass must be an array of names`);
    for (const key of fields.pass as unknown[]) {
      if (typeof key !== "string") throw new Error(`${name}.pass must be an array of names`);
      checkName(key, `${name}.pass`);
      pass.push(key);
    }
  }
  return { set, pass };
}

/**
 * The environment for a command: the allowlisted variables of `env` (default: this process's),
 * the `pass` names that are set, then `set`. A forbidden name never gets through, whatever the
 * config says (validateShellEnv refuses it earlier; this is the second lock).
 */
export function buildToolEnv(
  config: ShellEnvConfig = EMPTY_SHELL_ENV,
  env: Env = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (ALLOWED.has(key) || ALLOWED_PREFIXES.some((p) => key.startsWith(p))) out[key] = value;
  }
  for (const key of config.pass) {
    const value = env[key];
    if (value !== undefined) out[key] = value;
  }
  Object.assign(out, config.set);
  for (const key of Object.keys(out)) {
    if (forbiddenReason(key) !== undefined) delete out[key];
  }
  return out;
}
