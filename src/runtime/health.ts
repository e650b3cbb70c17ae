// What `warren doctor` and the first screen say, one line each: the database (which, and does it
// answer), the sandbox (bubblewrap on, off, or unavailable and why), the model server (does its
// base URL answer). Below the command line and the TUI, which both show them.
import { DEFAULT_BASE_URL, type ModelConfig } from "../config/config.js";
import { maskUrl } from "../db/unavailable.js";
import { sandboxStatus } from "../sandbox/launch.js";
import type { SandboxConfig } from "../sandbox/settings.js";

type Env = Record<string, string | undefined>;

export interface HealthLine {
  /** The check, or a kind of setup file read (runtime/setup-sources.ts: "instructions", "mcp", …). */
  label: "database" | "sandbox" | "model server" | (string & {});
  /** false: something the person should fix (or knowingly accept). */
  ok: boolean;
  text: string;
}

/**
 * The database: DATABASE_URL (masked) or the embedded server under $WARREN_HOME, and whether it
 * answers `SELECT 1`. Never starts the embedded server (a doctor only looks).
 */
export async function databaseHealth(env: Env, timeoutMs = 5_000): Promise<HealthLine> {
  const { connectChecked, warrenHome } = await import("../db/resolve.js");
  const url = env.DATABASE_URL;
  if (url) {
    const problem = await connectChecked(url, { timeoutMs }).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    return problem
      ? { label: "database", ok: false, text: `unreachable: ${problem}` }
      : { label: "database", ok: true, text: `${maskUrl(url)} (DATABASE_URL), reachable` };
  }
  const home = warrenHome(env);
  const { embeddedStatus } = await import("../db/embedded.js");
  const status = await embeddedStatus(home);
  if (!status.initialised) {
    return {
      label: "database",
      ok: true,
      text: `embedded PostgreSQL in ${home}, not set up yet (created on first use)`,
    };
  }
  return status.running
    ? { label: "database", ok: true, text: `embedded PostgreSQL in ${home}, running` }
    : {
        label: "database",
        ok: true,
        text: `embedded PostgreSQL in ${home}, stopped (started on first use)`,
      };
}

/** The database a running warren uses, for the first screen (it answered: we are running). */
export function databaseInUse(env: Env, home: string): HealthLine {
  const url = env.DATABASE_URL;
  return url
    ? { label: "database", ok: true, text: `${maskUrl(url)} (DATABASE_URL)` }
    : { label: "database", ok: true, text: `embedded PostgreSQL in ${home}` };
}

export async function sandboxHealth(config: SandboxConfig): Promise<HealthLine> {
  const status = await sandboxStatus(config);
  return { label: "sandbox", ok: status.state === "on", text: status.line };
}

/**
 * Whether the model server answers at its base URL: any HTTP reply to GET /models counts (a 401
 * says the server is there and the key is wrong: said too).
 */
export async function modelServerHealth(
  model: ModelConfig,
  timeoutMs = 3_000,
): Promise<HealthLine> {
  const base = (model.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const label = "model server";
  let response: Response;
  try {
    response = await fetch(`${base}/models`, {
      headers: model.apiKey ? { authorization: `Bearer ${model.apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === "TimeoutError"
        ? `no answer in ${timeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (err as Error).message);
    return { label, ok: false, text: `${base} unreachable (${why})` };
  }
  if (response.status === 401 || response.status === 403) {
    return {
      label,
      ok: false,
      text: `${base} reachable, but it refused the API key (HTTP ${response.status})`,
    };
  }
  return { label, ok: true, text: `${base} reachable (HTTP ${response.status})` };
}

/** The first screen's three lines: the database in use, the sandbox, the model server. */
export async function firstScreenChecks(
  config: { sandbox: SandboxConfig; model: ModelConfig },
  env: Env,
): Promise<HealthLine[]> {
  const { warrenHome } = await import("../db/resolve.js");
  const [sandbox, server] = await Promise.all([
    sandboxHealth(config.sandbox),
    config.model.name ? modelServerHealth(config.model) : undefined,
  ]);
  return [databaseInUse(env, warrenHome(env)), sandbox, ...(server ? [server] : [])];
}
