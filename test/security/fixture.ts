// A warren as a hostile model finds it: secrets in the environment (database URL, API keys,
// PG*, WARREN_*), an embedded database's home with its password file, a config file with an API
// key, a ~/.pgpass, and a directory beside the agent's working directory to escape into. Every
// path lives under /var/tmp, not /tmp: the sandbox's private /tmp would hide them by accident.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { loadConfig, shellSettingsOf } from "../../src/config/config.js";
import { bashTool } from "../../src/tools/bash.js";
import type { ShellSettings } from "../../src/sandbox/settings.js";
import type { ToolOutcome } from "../../src/tools/tool.js";

export const SECRET = {
  dbPassword: "dbpw-7f3a91c2",
  apiKey: "sk-apikey-55e0b1",
  pgPassword: "pgpw-2c8d44",
  homePassword: "homepw-9b7e13",
  configKey: "sk-config-61ad0f",
  pgpass: "pgpass-d41e77",
};

export interface Fixture {
  base: string;
  home: string;
  warrenHome: string;
  configFile: string;
  /** The agent's working directory. */
  cwd: string;
  /** A directory beside it (outside the working directory, outside /tmp). */
  outside: string;
  env: Record<string, string | undefined>;
  cleanup(): void;
}

/**
 * Sets the secrets into process.env (as a started warren has them) until cleanup(). `config` is
 * written to the config file beside the API key.
 */
export function makeFixture(config: Record<string, unknown> = {}): Fixture {
  const base = mkdtempSync("/var/tmp/warren-security-");
  const home = path.join(base, "home");
  const warrenHome = path.join(home, ".local", "share", "warren");
  const configDir = path.join(home, ".config", "warren");
  const cwd = path.join(base, "work");
  const outside = path.join(base, "outside");
  for (const dir of [warrenHome, path.join(warrenHome, "pgdata"), configDir, cwd, outside]) {
    mkdirSync(dir, { recursive: true });
  }
  writeFileSync(
    path.join(warrenHome, "postgres.json"),
    JSON.stringify({ user: "warren", password: SECRET.homePassword, port: 54329 }),
    { mode: 0o600 },
  );
  writeFileSync(path.join(warrenHome, "pgdata", "PG_VERSION"), "16\n");
  const configFile = path.join(configDir, "config.json");
  writeFileSync(configFile, JSON.stringify({ api_key: SECRET.configKey, ...config }));
  writeFileSync(path.join(home, ".pgpass"), `*:*:*:*:${SECRET.pgpass}\n`, { mode: 0o600 });

  const env: Record<string, string | undefined> = {
    HOME: home,
    XDG_CONFIG_HOME: undefined,
    XDG_DATA_HOME: undefined,
    WARREN_HOME: undefined,
    WARREN_CONFIG: undefined,
    WARREN_SANDBOX: undefined,
    WARREN_BWRAP: undefined,
    DATABASE_URL: `postgres://warren:${SECRET.dbPassword}@127.0.0.1:5432/warren`,
    OPENAI_API_KEY: SECRET.apiKey,
    ANTHROPIC_API_KEY: SECRET.apiKey,
    PGPASSWORD: SECRET.pgPassword,
    WARREN_MODEL: "secret-model",
  };
  const saved: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) {
    saved[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  return {
    base,
    home,
    warrenHome,
    configFile,
    cwd,
    outside,
    env,
    cleanup() {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** The shell settings a worker would use: the real config loaded from the fixture's files. */
export function settingsFrom(extraEnv: Record<string, string> = {}): ShellSettings {
  return shellSettingsOf(loadConfig({ ...process.env, ...extraEnv }));
}

/** Runs `command` through the real bash tool, as an agent in `cwd`. */
export async function bash(
  command: string,
  cwd: string,
  shell: ShellSettings | undefined,
  signal = new AbortController().signal,
): Promise<ToolOutcome> {
  return bashTool.run({ command, timeout: 60 }, { cwd, signal, shell });
}

export function output(outcome: ToolOutcome): { exit_code: number | null; output: string } {
  if (!outcome.ok) throw new Error(`tool failed: ${outcome.error.code} ${outcome.error.message}`);
  return outcome.value as { exit_code: number | null; output: string };
}

/** Whether any of the secrets shows in `text`. */
export function leaked(text: string): string[] {
  return Object.entries(SECRET)
    .filter(([, value]) => text.includes(value))
    .map(([name]) => name);
}
