// The MCP servers a person already set up for Claude Code and Codex (SPEC §9): `mcpServers` in
// `~/.claude.json` (the user's, and the entry for this project under `projects["/abs/path"]`) and
// `[mcp_servers.NAME]` in `~/.codex/config.toml`. They are the person's own files, so they are read
// like warren's config (no allow asked), with `${VAR}` expanded as Claude Code does; warren's own
// `mcp_servers` win on a name clash (one note), then Claude Code's project entry, its user entry,
// Codex's. An entry warren cannot use is one warning naming it; the others still start.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { repositoryRoot } from "../paths.js";
import { parseMcpServers, type McpServerConfig } from "./config.js";
import { expandServerEntry } from "./expand.js";

type Env = Record<string, string | undefined>;

export interface PersonMcp {
  servers: Record<string, McpServerConfig>;
  /** The files read (that exist), for the first screen and `warren doctor`. */
  files: string[];
  /** One line each: an entry not used, a name another source took. */
  warnings: string[];
}

interface Source {
  file: string;
  where: string;
  entries: Record<string, unknown>;
}

function homeOf(env: Env): string {
  return env.HOME || os.homedir();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

/** Claude Code's `~/.claude.json`: the project's entry (nearest of cwd and its repository root), then the user's. */
function claudeSources(file: string, cwd: string, warnings: string[]): Source[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    warnings.push(
      `${file} could not be read (${(err as Error).message}); its MCP servers are not used`,
    );
    return [];
  }
  if (!isObject(parsed)) return [];
  const out: Source[] = [];
  const projects = isObject(parsed.projects) ? parsed.projects : {};
  const leaf = path.resolve(cwd);
  const keys = [leaf, repositoryRoot(leaf)].filter((k): k is string => !!k);
  for (const key of [...new Set(keys)]) {
    const entry = projects[key];
    if (isObject(entry) && isObject(entry.mcpServers)) {
      out.push({
        file,
        where: `${file}: projects["${key}"].mcpServers`,
        entries: entry.mcpServers,
      });
      break;
    }
  }
  if (isObject(parsed.mcpServers)) {
    out.push({ file, where: `${file}: mcpServers`, entries: parsed.mcpServers });
  }
  return out;
}

/**
 * Codex's keys, in warren's words (its timeouts are `_sec`, its headers `http_headers`, its
 * `bearer_token_env_var` the name of the variable holding an HTTP server's bearer token,
 * `env_vars` the names of variables passed on to a stdio server, `env_http_headers` a header
 * name → the variable holding its value); a string is one line saying why the entry is not used.
 * As in Codex, a listed variable that is not set is left out.
 */
/** A name `${NAME}` can stand for (expand.ts's references). */
const isVarName = (v: unknown): v is string =>
  typeof v === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v);

function fromCodex(entry: unknown, env: Env): unknown {
  if (!isObject(entry)) return entry;
  const {
    startup_timeout_sec,
    tool_timeout_sec,
    http_headers,
    enabled,
    bearer_token_env_var,
    env_vars,
    env_http_headers,
    ...rest
  } = entry;
  void enabled;
  let headers = http_headers;
  // Values are written as `${NAME}` and filled in by expandServerEntry, once: a value that itself
  // reads like `${OTHER}` is never expanded a second time.
  if (env_vars !== undefined) {
    if (!Array.isArray(env_vars) || !env_vars.every(isVarName)) {
      return "env_vars must be a list of environment variable names";
    }
    const passed = env_vars.flatMap((name: string) =>
      env[name] === undefined ? [] : [[name, `\${${name}}`] as const],
    );
    // The entry's own `env` wins over a variable passed on by name.
    rest.env = { ...Object.fromEntries(passed), ...(isObject(rest.env) ? rest.env : {}) };
  }
  if (env_http_headers !== undefined) {
    if (!isObject(env_http_headers) || !Object.values(env_http_headers).every(isVarName)) {
      return "env_http_headers must map header names to environment variable names";
    }
    const fromEnv = Object.entries(env_http_headers).flatMap(([header, name]) =>
      env[name as string] === undefined ? [] : [[header, `\${${name as string}}`] as const],
    );
    headers = { ...(isObject(headers) ? headers : {}), ...Object.fromEntries(fromEnv) };
  }
  if (bearer_token_env_var !== undefined) {
    if (!isVarName(bearer_token_env_var)) {
      return "bearer_token_env_var must name an environment variable";
    }
    const token = env[bearer_token_env_var];
    if (!token) {
      return `bearer_token_env_var names ${bearer_token_env_var}, which is not set in warren's environment`;
    }
    headers = {
      ...(isObject(headers) ? headers : {}),
      Authorization: `Bearer \${${bearer_token_env_var}}`,
    };
  }
  return {
    ...rest,
    ...(headers !== undefined ? { headers } : {}),
    ...(startup_timeout_sec !== undefined ? { startup_timeout_seconds: startup_timeout_sec } : {}),
    ...(tool_timeout_sec !== undefined ? { call_timeout_seconds: tool_timeout_sec } : {}),
  };
}

function codexSource(file: string, env: Env, warnings: string[]): Source[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    warnings.push(
      `${file} could not be read (${(err as Error).message}); its MCP servers are not used`,
    );
    return [];
  }
  let parsed: unknown;
  try {
    parsed = parseToml(text);
  } catch (err) {
    const first = (err as Error).message.split("\n")[0];
    warnings.push(`${file} is not valid TOML (${first}); its MCP servers are not used`);
    return [];
  }
  if (!isObject(parsed) || !isObject(parsed.mcp_servers)) return [];
  const entries: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(parsed.mcp_servers)) {
    if (isObject(entry) && entry.enabled === false) continue; // turned off there: off here
    const mapped = fromCodex(entry, env);
    if (typeof mapped === "string") {
      warnings.push(`${file}: mcp_servers.${name}: ${mapped} (that server is not used)`);
    } else entries[name] = mapped;
  }
  return [{ file, where: `${file}: mcp_servers`, entries }];
}

/**
 * The person's Claude Code and Codex servers for an agent started in `cwd`. `taken`: the names
 * warren's own config has (they win). `defaults`: the config's timeouts.
 */
export function loadPersonMcp(
  cwd: string,
  env: Env,
  defaults: { startup?: unknown; call?: unknown; taken?: Iterable<string> } = {},
): PersonMcp {
  const home = homeOf(env);
  const warnings: string[] = [];
  const claudeFile = path.join(home, ".claude.json");
  const codexFile = path.join(home, ".codex", "config.toml");
  const sources = [
    ...claudeSources(claudeFile, cwd, warnings),
    ...codexSource(codexFile, env, warnings),
  ];
  const taken = new Set(defaults.taken ?? []);
  const servers: Record<string, McpServerConfig> = {};
  const from = new Map<string, string>();
  for (const source of sources) {
    for (const [name, entry] of Object.entries(source.entries)) {
      if (taken.has(name)) {
        warnings.push(
          `${source.where}.${name}: not used, warren's config has a server of that name`,
        );
        continue;
      }
      const earlier = from.get(name);
      if (earlier) {
        warnings.push(`${source.where}.${name}: not used, ${earlier} has a server of that name`);
        continue;
      }
      try {
        const one = parseMcpServers(
          { [name]: expandServerEntry(entry, env, `${source.where}.${name}`) },
          { startup: defaults.startup, call: defaults.call },
          path.dirname(source.file),
          source.where,
        )[name]!;
        servers[name] = one;
        from.set(name, source.where);
      } catch (err) {
        warnings.push(`${(err as Error).message} (that server is not used)`);
      }
    }
  }
  const files = [...new Set(sources.map((s) => s.file))];
  return { servers, files, warnings };
}
