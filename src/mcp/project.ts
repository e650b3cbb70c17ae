// A project's `.mcp.json` in Claude Code's format (`{"mcpServers": {NAME: {command, args, env,
// cwd} | {type: "http", url, headers}}}`), from the working directory up to its repository root
// (the nearest wins), with `${VAR}` and `${VAR:-default}` expanded (expand.ts). Its servers carry
// the file's allow key (allow.ts) and start only once the person allowed that content: a cloned
// repository starts nothing by itself. A broken file or entry is one warning line, never a config
// error (warren must still run in that directory).
import fs from "node:fs";
import path from "node:path";
import { repositoryRoot } from "../paths.js";
import { allowKey, allowStorePath, canonicalFile, isAllowed, type ProjectAllow } from "./allow.js";
import { escapeControl } from "../text/escape.js";
import { isStdio, parseMcpServers, type McpServerConfig } from "./config.js";
import { expandServerEntry } from "./expand.js";

type Env = Record<string, string | undefined>;

export const PROJECT_FILE = ".mcp.json";

export interface ProjectMcp {
  /** The file's real path. */
  file: string;
  allow: ProjectAllow;
  /** Its usable servers, each with `allow` set (a name the config also has is left out). */
  servers: Record<string, McpServerConfig>;
  /** Names the config's own `mcp_servers` took (not started from this file). */
  shadowed: string[];
  /** One line each: what in the file could not be used. */
  warnings: string[];
}

/** The nearest `.mcp.json` from `cwd` up to its repository root (or `cwd` alone outside one). */
export function findProjectMcpFile(cwd: string): string | undefined {
  const leaf = path.resolve(cwd);
  const top = repositoryRoot(leaf) ?? leaf;
  for (let dir = leaf; ; dir = path.dirname(dir)) {
    const file = path.join(dir, PROJECT_FILE);
    if (fs.existsSync(file)) return file;
    if (dir === top || path.dirname(dir) === dir) return undefined;
  }
}

export interface ProjectDefaults {
  startup?: unknown;
  call?: unknown;
  /** The config's own server names: they win on a clash. */
  taken?: Iterable<string>;
}

/**
 * Parses `content` (the file as read once: what is shown is what is allowed). Each server is
 * checked alone; a bad one is a warning and the rest stay usable. A relative `cwd`, and a stdio
 * server without one, run in the file's directory.
 */
export function parseProjectMcp(
  file: string,
  content: string,
  env: Env,
  defaults: ProjectDefaults = {},
): ProjectMcp {
  const real = canonicalFile(file);
  const allow: ProjectAllow = {
    file: real,
    key: allowKey(real, content),
    store: allowStorePath(env),
  };
  const out: ProjectMcp = { file: real, allow, servers: {}, shadowed: [], warnings: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch (err) {
    out.warnings.push(
      `${real} is not valid JSON (${(err as Error).message}); none of its MCP servers are used`,
    );
    return out;
  }
  const entries = (parsed as { mcpServers?: unknown } | null)?.mcpServers;
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || entries === undefined) {
    out.warnings.push(`${real} has no "mcpServers" object; none of its MCP servers are used`);
    return out;
  }
  if (!entries || typeof entries !== "object" || Array.isArray(entries)) {
    out.warnings.push(`${real}: "mcpServers" must be an object; none of its servers are used`);
    return out;
  }
  const taken = new Set(defaults.taken ?? []);
  const dir = path.dirname(real);
  for (const [name, entry] of Object.entries(entries as Record<string, unknown>)) {
    if (taken.has(name)) {
      out.shadowed.push(name);
      continue;
    }
    try {
      const one = parseMcpServers(
        { [name]: expandServerEntry(entry, env, `${real}: mcpServers.${name}`) },
        { startup: defaults.startup, call: defaults.call },
        dir,
        `${real}: mcpServers`,
      )[name]!;
      if ("command" in one && one.cwd === undefined) one.cwd = dir;
      out.servers[name] = { ...one, allow };
    } catch (err) {
      out.warnings.push(`${(err as Error).message} (that server is not used)`);
    }
  }
  return out;
}

/** The project's `.mcp.json` as found from `cwd`, read once; undefined when there is none. */
export function loadProjectMcp(
  cwd: string,
  env: Env,
  defaults: ProjectDefaults = {},
): ProjectMcp | undefined {
  const file = findProjectMcpFile(cwd);
  if (!file) return undefined;
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8");
  } catch (err) {
    const real = canonicalFile(file);
    return {
      file: real,
      allow: { file: real, key: "", store: allowStorePath(env) },
      servers: {},
      shadowed: [],
      warnings: [`cannot read ${file}: ${(err as Error).message}`],
    };
  }
  return parseProjectMcp(file, content, env, defaults);
}

/**
 * One line when the project's `.mcp.json` has servers that wait for the person's allow (`how`:
 * how to allow it where the line is shown); undefined when there are none or it is allowed.
 */
export function projectMcpWaiting(
  project: ProjectMcp | undefined,
  how = "`warren mcp allow`",
): string | undefined {
  if (!project) return undefined;
  const names = Object.keys(project.servers).sort();
  if (names.length === 0 || isAllowed(project.allow)) return undefined;
  const shown = names.length > 4 ? [...names.slice(0, 4), "…"] : names;
  return `${project.file} waiting: its ${names.length} MCP server${names.length === 1 ? "" : "s"} (${shown.join(", ")}) start only after ${how} allows it`;
}

/** What the person is shown before a file is allowed: each server as it would start. */
export function allowLines(project: ProjectMcp): string[] {
  const lines: string[] = [];
  for (const [name, server] of Object.entries(project.servers).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    if (isStdio(server)) {
      const env = Object.keys(server.env);
      lines.push(
        `  ${name}  stdio  ${[server.command, ...server.args].join(" ")}` +
          `${server.cwd ? `  (in ${server.cwd})` : ""}${env.length ? `  env: ${env.join(", ")}` : ""}`,
      );
    } else {
      const headers = Object.keys(server.headers);
      lines.push(
        `  ${name}  http  ${server.url}${headers.length ? `  headers: ${headers.join(", ")}` : ""}`,
      );
    }
  }
  for (const name of project.shadowed) {
    lines.push(`  ${name}  not started from this file: the config's mcp_servers has that name`);
  }
  return lines.map((line) => escapeControl(line));
}
