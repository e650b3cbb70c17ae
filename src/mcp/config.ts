// `mcp_servers` in the config file (SPEC §9): {name: {command, args?, env?, cwd?}} for a server
// on stdio, {name: {url, headers?}} for one over streamable HTTP; each checked with a one-line
// error naming the bad entry.
import { createHash } from "node:crypto";
import path from "node:path";
import type { ShellSettings } from "../sandbox/settings.js";
import type { ProjectAllow } from "./allow.js";

interface Timeouts {
  /** How long connecting (spawn + initialize + listTools) may take. */
  startupTimeoutMs: number;
  /** How long one tools/call may take. */
  callTimeoutMs: number;
  /** Set on a project `.mcp.json`'s server: it starts only once that file is allowed (allow.ts). */
  allow?: ProjectAllow;
}

export interface StdioServerConfig extends Timeouts {
  command: string;
  args: string[];
  /** Added to the small allowlisted environment (env.ts); warren's own is never passed on. */
  env: Record<string, string>;
  cwd?: string;
  /**
   * false: runs outside the sandbox (`"sandbox": false`), honoured only from the person's config
   * file: a project `.mcp.json`'s server (one with `allow`) runs sandboxed whatever it says.
   */
  sandbox?: false;
  /** The sandbox it runs in (config.ts sets the config's; absent: the default, auto). */
  confine?: ShellSettings;
}

export interface HttpServerConfig extends Timeouts {
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export const DEFAULT_STARTUP_TIMEOUT_S = 30;
export const DEFAULT_CALL_TIMEOUT_S = 120;

/** Server names become part of tool names (`mcp__<server>__<tool>`). */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function isStdio(server: McpServerConfig): server is StdioServerConfig {
  return "command" in server;
}

function stringMap(value: unknown, name: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (
    typeof value !== "object" ||
    Array.isArray(value) ||
    Object.values(value).some((v) => typeof v !== "string")
  ) {
    throw new Error(`${name} must be an object of strings`);
  }
  return { ...(value as Record<string, string>) };
}

function seconds(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback * 1000;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number of seconds`);
  }
  return value * 1000;
}

const STDIO_KEYS = ["command", "args", "env", "cwd", "type", "sandbox"];
const HTTP_KEYS = ["url", "headers", "type"];
const COMMON_KEYS = ["startup_timeout_seconds", "call_timeout_seconds"];

/**
 * Checks `mcp_servers` (and the defaults for its timeouts); throws one line naming the bad entry.
 * `base` resolves a relative `cwd` (the config file's directory).
 */
export function parseMcpServers(
  value: unknown,
  defaults: { startup?: unknown; call?: unknown },
  base: string,
  where = "mcp_servers",
): Record<string, McpServerConfig> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${where} must be an object: {"NAME": {"command": …} or {"url": …}}`);
  }
  const startup = seconds(
    defaults.startup,
    "mcp_startup_timeout_seconds",
    DEFAULT_STARTUP_TIMEOUT_S,
  );
  const call = seconds(defaults.call, "mcp_call_timeout_seconds", DEFAULT_CALL_TIMEOUT_S);
  const out: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    const at = `${where}.${name}`;
    if (!SERVER_NAME.test(name)) {
      throw new Error(`${at}: a server's name may only use letters, digits, _ and - (1-64)`);
    }
    // Tool names are mcp__SERVER__TOOL: a server "gh__x" would fall under a policy's `mcp__gh__*`.
    if (name.includes("__")) {
      throw new Error(`${at}: a server's name may not contain "__" (tools are mcp__SERVER__TOOL)`);
    }
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) {
      throw new Error(`${at} must be {"command": …, "args": […]} or {"url": …}`);
    }
    const e = entry as Record<string, unknown>;
    const timeouts: Timeouts = {
      startupTimeoutMs: seconds(
        e.startup_timeout_seconds,
        `${at}.startup_timeout_seconds`,
        startup / 1000,
      ),
      callTimeoutMs: seconds(e.call_timeout_seconds, `${at}.call_timeout_seconds`, call / 1000),
    };
    const hasCommand = e.command !== undefined;
    const hasUrl = e.url !== undefined;
    if (hasCommand === hasUrl) {
      throw new Error(`${at} needs exactly one of "command" (stdio) or "url" (streamable HTTP)`);
    }
    const allowed = [...(hasCommand ? STDIO_KEYS : HTTP_KEYS), ...COMMON_KEYS];
    const unknown = Object.keys(e).find((k) => !allowed.includes(k));
    if (unknown !== undefined) {
      throw new Error(`${at} has an unknown key "${unknown}" (${allowed.join(", ")})`);
    }
    if (hasCommand) {
      if (e.type !== undefined && e.type !== "stdio") {
        throw new Error(`${at}.type must be "stdio" for a server with a "command"`);
      }
      if (typeof e.command !== "string" || e.command.trim() === "") {
        throw new Error(`${at}.command must be a non-empty string`);
      }
      if (
        e.args !== undefined &&
        (!Array.isArray(e.args) || e.args.some((a) => typeof a !== "string"))
      ) {
        throw new Error(`${at}.args must be a list of strings`);
      }
      if (e.cwd !== undefined && (typeof e.cwd !== "string" || e.cwd === "")) {
        throw new Error(`${at}.cwd must be a directory path`);
      }
      if (e.sandbox !== undefined && typeof e.sandbox !== "boolean") {
        throw new Error(`${at}.sandbox must be true or false`);
      }
      out[name] = {
        command: e.command,
        args: (e.args as string[] | undefined) ?? [],
        env: stringMap(e.env, `${at}.env`),
        ...(e.cwd !== undefined ? { cwd: path.resolve(base, e.cwd as string) } : {}),
        ...(e.sandbox === false && { sandbox: false }),
        ...timeouts,
      };
    } else {
      if (e.type !== undefined && e.type !== "http" && e.type !== "streamable-http") {
        throw new Error(`${at}.type must be "http" (streamable HTTP; SSE is not supported)`);
      }
      let url: URL;
      try {
        url = new URL(String(e.url));
      } catch {
        throw new Error(`${at}.url must be an http:// or https:// URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new Error(`${at}.url must be an http:// or https:// URL`);
      }
      out[name] = { url: url.href, headers: stringMap(e.headers, `${at}.headers`), ...timeouts };
    }
  }
  return out;
}

/** A hash of what makes a server what it is: a changed command, URL or env is another server. */
export function configHash(server: McpServerConfig): string {
  const key = isStdio(server)
    ? {
        command: server.command,
        args: server.args,
        env: server.env,
        cwd: server.cwd ?? null,
        ...(server.sandbox === false && { sandbox: false }),
      }
    : { url: server.url, headers: server.headers };
  return createHash("sha256").update(JSON.stringify(key)).digest("hex").slice(0, 32);
}

/** The servers, each stdio one set to run in `confine` (the config's sandbox). */
export function confineServers(
  servers: Record<string, McpServerConfig>,
  confine: ShellSettings,
): Record<string, McpServerConfig> {
  const out: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(servers)) {
    out[name] = isStdio(server) ? { ...server, confine } : server;
  }
  return out;
}
