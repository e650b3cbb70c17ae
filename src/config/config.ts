// Environment + config file → one typed Config: model endpoint, limits, budgets, profiles, workers.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Budget, FileAccess } from "../agents/agents.sql.js";
import type { Price, Prices } from "../agents/cost.js";
import { DEFAULT_LIMITS, type Limits } from "../agents/limits.js";
import { configPath } from "../paths.js";
import { compileOutputSchema, typeName } from "../text/json-schema.js";
import type { Profile } from "../agents/profile.js";
import { poolerSetting, type PoolerMode } from "../db/pooler.js";
import { EMPTY_SHELL_ENV, validateShellEnv, type ShellEnvConfig } from "../sandbox/env.js";
import type { SandboxConfig, SandboxMode, ShellSettings } from "../sandbox/settings.js";
import {
  networkPolicyOf,
  parseNetworkSetting,
  type NetworkPolicy,
  type NetworkSetting,
} from "../sandbox/network/rules.js";
import { loadAgentFiles } from "./agent-files.js";
import { telemetryOf, validateTelemetry, type TelemetrySettings } from "../telemetry/settings.js";
import type { FileChange } from "./accepted-files.js";
import {
  confineServers,
  isStdio,
  parseMcpServers,
  serverRefusal,
  type McpServerConfig,
} from "../mcp/config.js";
import { refusedHooks, validateHooks, type HooksConfig } from "../hooks/config.js";
import type { RunTrust } from "../tools/runnable.js";
import { loadProjectMcp, type ProjectMcp } from "../mcp/project.js";
import { loadClaudeSettings, mergeHooks, type ClaudeSettings } from "./claude-settings.js";
import { resolveModelAliases } from "./model-aliases.js";
import { loadPersonMcp } from "../mcp/person.js";
import {
  parseApproveMode,
  validatePolicy,
  type ApproveMode,
  type Policy,
  type SettingsRule,
} from "../policy/policy.js";

type Env = Record<string, string | undefined>;

export interface ModelConfig {
  /** Model name; undefined = not configured (turns fail with one clear line). */
  name?: string;
  baseURL?: string;
  apiKey?: string;
  timeoutMs: number;
  maxRetries: number;
  /** Context window in tokens, by model name ("*": any model); else /models, else a default. */
  contextWindows: Record<string, number>;
  /**
   * `max_concurrent_requests`: model requests in flight at once across every process on the
   * database (runtime/model-cap.ts), by base URL or by model name; absent: no cap.
   */
  maxConcurrent?: Record<string, number>;
}

export interface Config {
  model: ModelConfig;
  limits: Limits;
  /** Budget for every forked agent unless its profile or `fork` says otherwise. */
  budget: Budget;
  /** Budget for root agents. */
  rootBudget: Budget;
  profiles: Record<string, Profile>;
  /** USD per million tokens by model name (`prices`); none built in: unpriced models show tokens. */
  prices: Prices;
  /** Where the file tools may reach, unless the agent's profile says otherwise (fileAccessFor). */
  fileAccess: FileAccess;
  /** The tool policy over the defaults (policy.ts); profiles narrow it. */
  policy?: Policy;
  /**
   * Claude Code's permission rules from its settings files (claude-settings.ts): every deny and
   * ask, and the allow rules of the person's own file and of trusted project files.
   */
  settingsRules?: SettingsRule[];
  /** The Claude Code settings files read, waiting for trust or broken (settingsLines shows them). */
  claudeSettings?: ClaudeSettings;
  /** `model_aliases`: Claude Code's model names (`sonnet`) to the server's model ids. */
  modelAliases?: Record<string, string>;
  /** The TUI's terminal title with the tree's counts, and a bell/OSC 9 on what needs the person. */
  notify: boolean;
  /** How new trees answer `ask` (WARREN_APPROVE); unset: the TUI asks, `-p` answers no. */
  approve?: ApproveMode;
  /** Worker threads that run agent turns. */
  workerThreads: number;
  /** Agents one process runs at once (across its threads). */
  concurrency: number;
  leaseSeconds: number;
  /**
   * The LISTEN connection's URL (WARREN_LISTEN_URL): undefined = the database's; null = no LISTEN
   * at all ("off", e.g. when DATABASE_URL is PgBouncer in transaction mode). See listenUrlFor.
   */
  listenUrl?: string | null;
  /**
   * WARREN_POOLER=transaction: DATABASE_URL is a pooler in transaction mode (db/pooler.ts); LISTEN
   * is then off unless WARREN_LISTEN_URL names a direct connection.
   */
  pooler?: PoolerMode;
  /**
   * MCP servers by name: `mcp_servers` (src/mcp/config.ts), and the project `.mcp.json`'s
   * (mcp/project.ts; each with `allow`: started only once that file is allowed).
   */
  mcpServers: Record<string, McpServerConfig>;
  /**
   * The person's hooks (`hooks`, Claude Code's shape; src/hooks/config.ts): the config's, then
   * those of ~/.claude/settings.json and of trusted project settings files (claude-settings.ts).
   */
  hooks?: HooksConfig;
  /**
   * Where agents write (the working directory warren started in, `sandbox_writable`) and what
   * the person's `trusted_paths` trust: a hook or MCP server that would run a file an agent could
   * have written is refused (tools/runnable.ts).
   */
  runTrust: RunTrust;
  /** The project's `.mcp.json`, when there is one (its servers are in mcpServers too). */
  projectMcp?: ProjectMcp;
  /** The person's Claude Code / Codex files read for MCP servers (mcp/person.ts). */
  mcpFiles?: string[];
  /** Where the config came from, for `--help` and error messages. */
  configPath?: string;
  /** The OS sandbox for bash (sandbox/launch.ts): `sandbox`, `sandbox_network`, `sandbox_writable`. */
  sandbox: SandboxConfig;
  /** What bash's environment gets beyond the allowlist (sandbox/env.ts): `shell_env`. */
  shellEnv: ShellEnvConfig;
  /** The agent file each profile from one came from (agent-files.ts). */
  agentFiles?: Record<string, string>;
  /**
   * Agent files that differ from what the person accepted (accepted-files.ts): read in their
   * accepted form, and asked about once per tree (runtime/file-changes.ts).
   */
  agentFileChanges?: FileChange[];
  /** One line each, to show once: agent files that could not be used (`FILE:LINE: why`). */
  warnings?: string[];
  /**
   * OpenTelemetry export (`telemetry` under the OTEL_* variables; telemetry/settings.ts);
   * absent: off, and no part of the SDK is loaded.
   */
  telemetry?: TelemetrySettings;
  /**
   * Checkpoints before each turn that may change files (docs/rewind.md): `checkpoints` (default
   * true) and `checkpoint_max_file_bytes` (default 10 MiB; larger files are skipped and named).
   * Absent: the defaults.
   */
  checkpoints?: CheckpointConfig;
}

export interface CheckpointConfig {
  enabled: boolean;
  maxFileBytes: number;
}

export const DEFAULT_CHECKPOINTS: CheckpointConfig = {
  enabled: true,
  maxFileBytes: 10 * 1024 * 1024,
};

export const DEFAULT_BUDGET: Budget = { turns: 50, tool_calls: 500, tokens: 2_000_000 };

export class ConfigError extends Error {
  override name = "ConfigError";
}

export { configPath };

interface FileConfig {
  model?: string;
  base_url?: string;
  api_key?: string;
  timeout_seconds?: number;
  max_retries?: number;
  /** Tokens: one number for every model, or {model name: tokens}. */
  context_window?: number | Record<string, number>;
  max_concurrent_requests?: unknown;
  limits?: Partial<Record<keyof Limits, number>>;
  budget?: Budget;
  root_budget?: Budget;
  profiles?: Record<string, Profile>;
  worker_threads?: number;
  concurrency?: number;
  lease_seconds?: number;
  file_access?: FileAccess;
  policy?: Policy;
  prices?: unknown;
  notify?: boolean;
  sandbox?: unknown;
  sandbox_network?: unknown;
  sandbox_writable?: unknown;
  shell_env?: unknown;
  mcp_servers?: unknown;
  mcp_startup_timeout_seconds?: unknown;
  mcp_call_timeout_seconds?: unknown;
  hooks?: unknown;
  trusted_paths?: unknown;
  telemetry?: unknown;
  model_aliases?: unknown;
  checkpoints?: unknown;
  checkpoint_max_file_bytes?: unknown;
}

function readFileConfig(file: string): FileConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(`${file} must contain a JSON object`);
  }
  return parsed as FileConfig;
}

/**
 * One line when the config file holds a secret (`api_key`, an MCP server's `env` or `headers`,
 * `shell_env.set`) and other users may read it; warren never changes the person's file itself.
 */
function configModeWarning(file: string, fc: FileConfig): string | undefined {
  let mode: number;
  try {
    mode = fs.statSync(file).mode;
  } catch {
    return undefined;
  }
  if ((mode & 0o044) === 0) return undefined;
  const servers = Object.values((fc.mcp_servers ?? {}) as Record<string, Record<string, unknown>>);
  const filled = (v: unknown) => !!v && typeof v === "object" && Object.keys(v).length > 0;
  const secret =
    !!fc.api_key ||
    servers.some((s) => filled(s?.env) || filled(s?.headers)) ||
    filled((fc.shell_env as { set?: unknown } | undefined)?.set);
  if (!secret) return undefined;
  const octal = (mode & 0o777).toString(8).padStart(3, "0");
  return `${file} holds secrets and other users may read it (mode ${octal}): chmod 600 ${file}`;
}

function positive(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${name} must be a non-negative number`);
  return n;
}

/**
 * The config from the environment and the config file, with the agent files (agent-files.ts)
 * found from `cwd` as profiles; the config file's own `profiles` win on a name clash.
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const file = configPath(env);
  const fc = readFileConfig(file);
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(fc.limits ?? {})) {
    if (!(key in limits)) throw new ConfigError(`unknown limit "${key}" in ${file}`);
    limits[key as keyof Limits] = positive(value, `limits.${key}`, limits[key as keyof Limits]);
  }
  const profileWarnings: string[] = [];
  for (const [name, profile] of Object.entries(fc.profiles ?? {})) {
    const schemaProblem = outputSchemaProblem(profile);
    if (schemaProblem) {
      // Like an agent file's: the profile stays, without the schema, and one warning says why.
      profileWarnings.push(`${file}: profiles.${name}.output_schema: ${schemaProblem}; not used`);
      delete profile.output_schema;
    }
    fileAccessSetting(profile?.file_access, `profiles.${name}.file_access`);
    policySetting(profile?.policy, `profiles.${name}.policy`);
    profileSandboxSetting(profile?.sandbox, `profiles.${name}.sandbox`);
    const network = networkSetting(profile?.sandbox_network, `profiles.${name}.sandbox_network`);
    if (network !== undefined) profile.sandbox_network = network;
    toolsSetting(profile?.tools, `profiles.${name}.tools`);
    if (profile && typeof profile === "object" && "hooks" in profile) {
      throw new ConfigError(
        `profiles.${name}.hooks: hooks are set only at the top level of the config ("hooks"), never per profile`,
      );
    }
    const isolation = profile?.isolation as unknown;
    if (isolation !== undefined && isolation !== null && isolation !== "worktree") {
      throw new ConfigError(
        `profiles.${name}.isolation must be "worktree", got ${JSON.stringify(isolation)}`,
      );
    }
  }
  const fromFiles = loadAgentFiles(cwd, env, new Set(Object.keys(fc.profiles ?? {})));
  const modelAliases = modelAliasesSetting(fc.model_aliases);
  const profiles = { ...fromFiles.profiles, ...fc.profiles };
  const aliasWarnings = resolveModelAliases(profiles, modelAliases, fromFiles.files);
  const claudeSettings = loadClaudeSettings(cwd, env);
  const ownHooks = hooksSetting(fc.hooks);
  // The settings files' hooks (the person's own, and trusted projects') after the config's.
  const hooks = { ...ownHooks, hooks: mergeHooks(ownHooks.hooks, claudeSettings.hooks) };
  const mcpServers = mcpSetting(fc, path.dirname(file));
  // The person's Claude Code and Codex servers, after warren's own; a project's .mcp.json after both.
  const personMcp = loadPersonMcp(cwd, env, {
    startup: fc.mcp_startup_timeout_seconds,
    call: fc.mcp_call_timeout_seconds,
    taken: Object.keys(mcpServers),
  });
  const projectMcp = loadProjectMcp(cwd, env, {
    startup: fc.mcp_startup_timeout_seconds,
    call: fc.mcp_call_timeout_seconds,
    taken: [...Object.keys(mcpServers), ...Object.keys(personMcp.servers)],
  });
  const sandbox = sandboxSetting(fc, env);
  const runTrust: RunTrust = {
    writable: [path.resolve(cwd), ...sandbox.writable],
    trusted: pathList(fc.trusted_paths, "trusted_paths", env),
    configFile: file,
  };
  // Resolved now, and again before each run (a file planted since is caught then).
  const servers: Record<string, McpServerConfig> = {
    ...projectMcp?.servers,
    ...personMcp.servers,
    ...mcpServers,
  };
  const refused: string[] = refusedHooks(hooks.hooks, cwd, runTrust);
  for (const [name, server] of Object.entries(servers)) {
    if (!isStdio(server)) continue;
    server.trust = runTrust;
    const line = serverRefusal(name, server);
    if (line) refused.push(`${line}; it does not start`);
  }
  const modeWarning = configModeWarning(file, fc);
  const configFile = fs.existsSync(file) ? file : undefined;
  const apiKey = env.OPENAI_API_KEY || fc.api_key || undefined;
  const baseURL = env.OPENAI_BASE_URL || fc.base_url || undefined;
  return {
    model: {
      name: env.WARREN_MODEL || fc.model || undefined,
      baseURL,
      apiKey,
      timeoutMs:
        positive(env.WARREN_MODEL_TIMEOUT ?? fc.timeout_seconds, "timeout_seconds", 120) * 1000,
      maxRetries: positive(fc.max_retries, "max_retries", 2),
      contextWindows: contextWindows(env.WARREN_CONTEXT_WINDOW, fc.context_window),
      ...maxConcurrentSetting(fc.max_concurrent_requests, baseURL),
    },
    limits,
    budget: { ...DEFAULT_BUDGET, ...usdChecked(fc.budget, "budget") },
    rootBudget: { ...usdChecked(fc.root_budget, "root_budget") },
    prices: pricesSetting(fc.prices),
    profiles,
    agentFiles: fromFiles.files,
    ...(fromFiles.changes.length > 0 ? { agentFileChanges: fromFiles.changes } : {}),
    warnings: [
      ...profileWarnings,
      ...fromFiles.warnings,
      ...aliasWarnings,
      ...claudeSettings.warnings,
      ...hooks.warnings,
      ...personMcp.warnings,
      ...(projectMcp?.warnings ?? []),
      ...refused,
      ...(modeWarning ? [modeWarning] : []),
    ],
    workerThreads: Math.max(
      1,
      positive(
        env.WARREN_WORKER_THREADS ?? fc.worker_threads,
        "worker_threads",
        defaultWorkerThreads(os.availableParallelism()),
      ),
    ),
    concurrency: Math.max(
      1,
      positive(env.WARREN_CONCURRENCY ?? fc.concurrency, "concurrency", 256),
    ),
    leaseSeconds: Math.max(
      2,
      positive(env.WARREN_LEASE_SECONDS ?? fc.lease_seconds, "lease_seconds", 30),
    ),
    listenUrl: listenUrlSetting(env.WARREN_LISTEN_URL),
    ...poolerConfig(env),
    fileAccess: fileAccessSetting(fc.file_access, "file_access") ?? "cwd",
    policy: policySetting(fc.policy, "policy"),
    ...(claudeSettings.rules.length > 0 && { settingsRules: claudeSettings.rules }),
    ...(claudeSettings.files.length > 0 && { claudeSettings }),
    ...(Object.keys(modelAliases).length > 0 && { modelAliases }),
    notify: fc.notify !== false,
    // The config's own servers win on a name clash (projectMcp left those out).
    // Its stdio servers run in the config's sandbox (with their own env only: no shell_env).
    mcpServers: confineServers(servers, {
      sandbox,
      env: EMPTY_SHELL_ENV,
      ...(configFile && { configPath: configFile }),
    }),
    ...(projectMcp ? { projectMcp } : {}),
    ...(personMcp.files.length > 0 ? { mcpFiles: personMcp.files } : {}),
    ...(Object.keys(hooks.hooks).length > 0 ? { hooks: hooks.hooks } : {}),
    runTrust,
    ...(env.WARREN_APPROVE ? { approve: approveSetting(env.WARREN_APPROVE) } : {}),
    configPath: configFile,
    sandbox,
    shellEnv: withSettingsEnv(shellEnvSetting(fc.shell_env), claudeSettings.env),
    ...telemetrySetting(fc.telemetry, env),
    checkpoints: checkpointSetting(fc),
  };
}

/** `telemetry` checked, then the OTEL_* variables read over it; nothing when it stays off. */
function telemetrySetting(value: unknown, env: Env): { telemetry?: TelemetrySettings } {
  let block;
  try {
    block = validateTelemetry(value);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const telemetry = telemetryOf(block, env);
  return telemetry ? { telemetry } : {};
}

/** The settings files' `env` under the config's own `shell_env.set` (the config wins a clash). */
function withSettingsEnv(own: ShellEnvConfig, vars: Record<string, string>): ShellEnvConfig {
  if (Object.keys(vars).length === 0) return own;
  return { ...own, set: { ...vars, ...own.set } };
}

/** `model_aliases`: {"sonnet": "MODEL ID", …}, each a non-empty string. */
function modelAliasesSetting(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  const usage = 'model_aliases must be {"ALIAS": "MODEL", …} (e.g. {"sonnet": "gpt-4.1"})';
  if (typeof value !== "object" || Array.isArray(value)) throw new ConfigError(usage);
  const out: Record<string, string> = {};
  for (const [alias, model] of Object.entries(value as Record<string, unknown>)) {
    if (typeof model !== "string" || model.trim() === "") {
      throw new ConfigError(`model_aliases.${alias} must be a model name (a non-empty string)`);
    }
    out[alias] = model.trim();
  }
  return out;
}

/** `checkpoints` (a boolean) and `checkpoint_max_file_bytes` (a positive whole number). */
function checkpointSetting(fc: FileConfig): CheckpointConfig {
  if (fc.checkpoints !== undefined && typeof fc.checkpoints !== "boolean") {
    throw new ConfigError("checkpoints must be true or false");
  }
  const max = fc.checkpoint_max_file_bytes ?? DEFAULT_CHECKPOINTS.maxFileBytes;
  if (typeof max !== "number" || !Number.isInteger(max) || max <= 0) {
    throw new ConfigError("checkpoint_max_file_bytes must be a positive whole number of bytes");
  }
  return { enabled: fc.checkpoints !== false, maxFileBytes: max };
}

/** `sandbox` (WARREN_SANDBOX over it), `sandbox_network`, `sandbox_writable`; WARREN_BWRAP. */
function sandboxSetting(fc: FileConfig, env: Env): SandboxConfig {
  const mode = (env.WARREN_SANDBOX || fc.sandbox) ?? "auto";
  const name = env.WARREN_SANDBOX ? "WARREN_SANDBOX" : "sandbox";
  if (mode !== "auto" && mode !== "on" && mode !== "off") {
    throw new ConfigError(`${name} must be "auto", "on" or "off", got ${JSON.stringify(mode)}`);
  }
  const network = networkSetting(fc.sandbox_network ?? true, "sandbox_network")!;
  return {
    mode: mode as SandboxMode,
    network: networkPolicyOf(network),
    writable: pathList(fc.sandbox_writable, "sandbox_writable", env),
    bwrap: env.WARREN_BWRAP || "bwrap",
  };
}

/** `sandbox_writable`, `trusted_paths`: absolute paths (or "~/…"), resolved. */
function pathList(value: unknown, name: string, env: Env): string[] {
  const list = value ?? [];
  const usage = `${name} must be an array of absolute paths (or "~/…")`;
  if (!Array.isArray(list)) throw new ConfigError(usage);
  const home = env.HOME || os.homedir();
  return list.map((p: unknown) => {
    if (typeof p !== "string" || p === "") throw new ConfigError(usage);
    const expanded = p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p;
    if (!path.isAbsolute(expanded)) throw new ConfigError(`${usage}; got ${JSON.stringify(p)}`);
    return path.resolve(expanded);
  });
}

/** A `sandbox_network` (the config's, a profile's): true, false or {"allow": […], "deny": […]}. */
function networkSetting(value: unknown, name: string): NetworkSetting | undefined {
  if (value === undefined || value === null) return undefined;
  try {
    return parseNetworkSetting(value, name);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function shellEnvSetting(value: unknown): ShellEnvConfig {
  try {
    return validateShellEnv(value);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** `prices`: {model: {input, cached_input?, output}}, each a non-negative USD per million tokens. */
function pricesSetting(value: unknown): Prices {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError('prices must be an object: {"MODEL": {"input": …, "output": …}}');
  }
  const prices: Prices = {};
  for (const [model, entry] of Object.entries(value as Record<string, unknown>)) {
    const name = `prices.${model}`;
    const usage = `${name} must be {"input": N, "cached_input": N, "output": N} (USD per million tokens; cached_input optional)`;
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) throw new ConfigError(usage);
    const fields = entry as Record<string, unknown>;
    const unknown = Object.keys(fields).find(
      (k) => !["input", "cached_input", "output"].includes(k),
    );
    if (unknown !== undefined) throw new ConfigError(`${usage}; unknown field "${unknown}"`);
    const usd = (key: string, required: boolean): number | undefined => {
      const v = fields[key];
      if (v === undefined && !required) return undefined;
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
        throw new ConfigError(
          `${name}.${key} must be a non-negative number (USD per million tokens)`,
        );
      }
      return v;
    };
    const price: Price = { input: usd("input", true)!, output: usd("output", true)! };
    const cached = usd("cached_input", false);
    if (cached !== undefined) price.cached_input = cached;
    prices[model] = price;
  }
  return prices;
}

/** A budget's `usd` (the others are taken as given): a positive number of dollars. */
function usdChecked(budget: Budget | undefined, name: string): Budget | undefined {
  const usd: unknown = budget?.usd;
  if (usd !== undefined && (typeof usd !== "number" || !Number.isFinite(usd) || usd <= 0)) {
    throw new ConfigError(`${name}.usd must be a positive number of US dollars`);
  }
  return budget;
}

function poolerConfig(env: Env): { pooler?: PoolerMode } {
  try {
    const pooler = poolerSetting(env);
    return pooler ? { pooler } : {};
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function listenUrlSetting(value: string | undefined): string | null | undefined {
  if (!value) return undefined;
  if (value.trim().toLowerCase() === "off") return null;
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new ConfigError('WARREN_LISTEN_URL must be a postgres:// URL or "off"');
  }
  return value;
}

function fileAccessSetting(value: unknown, name: string): FileAccess | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "cwd" || value === "any") return value;
  throw new ConfigError(`${name} must be "cwd" or "any", got ${JSON.stringify(value)}`);
}

function profileSandboxSetting(value: unknown, name: string): SandboxMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "auto" || value === "on" || value === "off") return value;
  throw new ConfigError(`${name} must be "auto", "on" or "off", got ${JSON.stringify(value)}`);
}

function toolsSetting(value: unknown, name: string): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || value.some((t) => typeof t !== "string")) {
    throw new ConfigError(`${name} must be a list of tool names`);
  }
}

function approveSetting(value: string): ApproveMode {
  try {
    return parseApproveMode(value, "WARREN_APPROVE");
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function mcpSetting(fc: FileConfig, base: string): Record<string, McpServerConfig> {
  try {
    return parseMcpServers(
      fc.mcp_servers,
      { startup: fc.mcp_startup_timeout_seconds, call: fc.mcp_call_timeout_seconds },
      base,
    );
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function hooksSetting(value: unknown): ReturnType<typeof validateHooks> {
  try {
    return validateHooks(value);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function policySetting(value: unknown, name: string): Policy | undefined {
  try {
    return validatePolicy(value, name);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/**
 * How an agent's commands run: the sandbox and the environment (sandbox/launch.ts). `mode`: the
 * agent's own sandbox mode (capabilities.ts), which a fork can only make stricter than the config's;
 * `network`: its own network (capabilities.ts), likewise only narrower.
 */
export function shellSettingsOf(
  config: Config,
  mode: SandboxMode = config.sandbox.mode,
  network: NetworkPolicy = config.sandbox.network,
): ShellSettings {
  return {
    sandbox: { ...config.sandbox, mode, network },
    env: config.shellEnv,
    configPath: config.configPath,
  };
}

/** Why a config profile's `output_schema` cannot be used (ajv's reason), if it cannot. */
function outputSchemaProblem(profile: Profile | undefined): string | undefined {
  const schema = profile?.output_schema as unknown;
  if (schema === undefined || schema === null) return undefined;
  if (typeof schema !== "object" || Array.isArray(schema)) {
    return `must be an object (a JSON Schema), got ${typeName(schema)}`;
  }
  const compiled = compileOutputSchema(schema);
  return compiled.ok ? undefined : compiled.error;
}

/** The file access of an agent with profile `profileName`: the profile's, else the config's. */
export function fileAccessFor(config: Config, profileName: string | null | undefined): FileAccess {
  const profile = profileName ? config.profiles[profileName] : undefined;
  return profile?.file_access ?? config.fileAccess;
}

/**
 * Two worker threads, but one on a machine with two cores or fewer: the main thread (the TUI)
 * and the database (embedded, on the same machine) need the rest. There a second thread costs
 * more CPU than it adds (one more LISTEN backend that every NOTIFY signals, another pool of
 * connections, another event loop to switch to): on this project's 2-core machine, fan-in
 * orchestration took 2.2–2.5 ms per child with one thread and 3.1–4.0 ms with two, and both
 * this process's and PostgreSQL's CPU per child went down (README, "One worker thread").
 */
export function defaultWorkerThreads(cores: number): number {
  return cores <= 2 ? 1 : 2;
}

/**
 * The URL the LISTEN connection uses beside the database at `databaseUrl`; null: LISTEN off.
 * Behind a pooler in transaction mode the database's URL cannot LISTEN (the pooler hands each
 * transaction to any server connection, and notifications go to whichever ran the LISTEN), so
 * without WARREN_LISTEN_URL it is off.
 */
export function listenUrlFor(config: Config, databaseUrl: string): string | null {
  if (config.listenUrl !== undefined) return config.listenUrl;
  return config.pooler === "transaction" ? null : databaseUrl;
}

function contextWindows(
  fromEnv: string | undefined,
  fromFile: FileConfig["context_window"],
): Record<string, number> {
  const windows: Record<string, number> = {};
  const add = (key: string, value: unknown, name: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 256)
      throw new ConfigError(`${name} must be a whole number of tokens (at least 256)`);
    windows[key] = n;
  };
  if (typeof fromFile === "number") add("*", fromFile, "context_window");
  else if (fromFile && typeof fromFile === "object") {
    for (const [model, value] of Object.entries(fromFile))
      add(model, value, `context_window.${model}`);
  } else if (fromFile !== undefined)
    throw new ConfigError("context_window must be a number or an object");
  if (fromEnv) add("*", fromEnv, "WARREN_CONTEXT_WINDOW");
  return windows;
}

/** The server's key when none is configured: the SDK's default. */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** A base URL as a cap's key: without trailing slashes, so "…/v1/" and "…/v1" are one server. */
export function serverKey(baseURL: string | undefined): string {
  return (baseURL || DEFAULT_BASE_URL).replace(/\/+$/, "");
}

/**
 * `max_concurrent_requests`: a number (the configured server), or {"BASE_URL or MODEL": n}. Keys
 * with "://" are servers (stored without trailing slashes), others model names.
 */
function maxConcurrentSetting(
  value: unknown,
  baseURL: string | undefined,
): { maxConcurrent?: Record<string, number> } {
  if (value === undefined || value === null) return {};
  const caps: Record<string, number> = {};
  const add = (key: string, n: unknown, name: string) => {
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) {
      throw new ConfigError(`${name} must be a whole number of requests (at least 1)`);
    }
    caps[key.includes("://") ? serverKey(key) : key] = n;
  };
  if (typeof value === "number") add(serverKey(baseURL), value, "max_concurrent_requests");
  else if (typeof value === "object" && !Array.isArray(value)) {
    for (const [key, n] of Object.entries(value as Record<string, unknown>)) {
      if (key.trim() === "") throw new ConfigError("max_concurrent_requests has an empty key");
      add(key, n, `max_concurrent_requests.${key}`);
    }
  } else {
    throw new ConfigError(
      'max_concurrent_requests must be a number or {"BASE_URL or MODEL": number}',
    );
  }
  return { maxConcurrent: caps };
}

/** The one line shown when a turn needs a model and none is configured; undefined when fine. */
export function modelProblem(model: ModelConfig): string | undefined {
  if (!model.name) {
    return 'no model configured: set WARREN_MODEL (and OPENAI_API_KEY or OPENAI_BASE_URL), or "model" in the config file';
  }
  if (!model.apiKey && !model.baseURL) {
    return "no model server configured: set OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (any OpenAI-compatible server)";
  }
  return undefined;
}
