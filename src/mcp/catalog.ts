// Each MCP server's tool list, kept in the database (mcp_tools, keyed by the server's name and a
// hash of its configuration): fetched in the background when a process starts, read by every
// thread's turns. So no model request waits for a server whose list is stored, and every process
// offers the same list in the same order. A server whose list was never fetched (just added, its
// configuration changed) is waited for once, before the first request of the thread: all such
// servers at once, up to their startup timeout, with one line saying so (firstListing), so the
// first run offers the server's tools as Claude Code and Codex do.
import { sql } from "drizzle-orm";
import { notice, type WarningSink } from "../db/warning.js";
import type { Db, Queryable } from "../db/client.js";
import type { AgentToolContext } from "../tools/agent-context.js";
import type { Tool } from "../tools/tool.js";
import { errorMessage, fail } from "../tools/tool.js";
import { allowedOnly } from "./allow.js";
import { connect, listAllTools, type ListedTool } from "./client.js";
import { configHash, serverRefusal, type McpServerConfig } from "./config.js";
import { callMcpTool } from "./connections.js";

export type McpTool = Tool<AgentToolContext>;

export interface CatalogRow {
  server: string;
  config_hash: string;
  tools: ListedTool[] | null;
  error: string | null;
  fetched_at: string;
}

/** Connects to `server`, lists its tools and disconnects; the list, or throws one line. */
export async function fetchTools(name: string, server: McpServerConfig): Promise<ListedTool[]> {
  const conn = await connect(name, server);
  try {
    return await listAllTools(conn, server.startupTimeoutMs);
  } catch (err) {
    throw new Error(`MCP server "${name}" could not list its tools: ${errorMessage(err)}`);
  } finally {
    await conn.close();
  }
}

/** Fetches one server's list and stores it (or, failing, its error beside the last good list). */
export async function refreshServer(
  db: Queryable,
  name: string,
  server: McpServerConfig,
): Promise<{ tools: ListedTool[] } | { error: string }> {
  const hash = configHash(server);
  let outcome: { tools: ListedTool[] } | { error: string };
  try {
    outcome = { tools: await fetchTools(name, server) };
  } catch (err) {
    outcome = { error: errorMessage(err).split("\n")[0]! };
  }
  if ("tools" in outcome) {
    await db.execute(sql`
      INSERT INTO mcp_tools (server, config_hash, tools, error, fetched_at)
      VALUES (${name}, ${hash}, ${JSON.stringify(outcome.tools)}::jsonb, NULL, now())
      ON CONFLICT (server, config_hash)
      DO UPDATE SET tools = excluded.tools, error = NULL, fetched_at = now()`);
  } else {
    await db.execute(sql`
      INSERT INTO mcp_tools (server, config_hash, tools, error, fetched_at)
      VALUES (${name}, ${hash}, NULL, ${outcome.error}, now())
      ON CONFLICT (server, config_hash) DO UPDATE SET error = excluded.error`);
  }
  return outcome;
}

/**
 * Refreshes every configured server's list, concurrently; a server that fails is one warning
 * line. Run in the background at process start (runtime/pool.ts), never awaited by a turn. A
 * project server whose file is not allowed is left alone.
 */
export async function refreshCatalog(
  db: Queryable,
  servers: Record<string, McpServerConfig>,
  onWarning?: WarningSink,
): Promise<void> {
  await Promise.all(
    Object.entries(allowedOnly(servers)).map(async ([name, server]) => {
      const outcome = await refreshServer(db, name, server).catch((err: unknown) => ({
        error: `MCP server "${name}": its tool list could not be stored: ${errorMessage(err)}`,
      }));
      if ("error" in outcome) onWarning?.(notice(outcome.error));
    }),
  );
}

/** The stored rows of the configured servers (their current configuration's). */
export async function readCatalog(
  db: Queryable,
  servers: Record<string, McpServerConfig>,
): Promise<CatalogRow[]> {
  const keys = Object.entries(servers).map(([name, s]) => `${name}/${configHash(s)}`);
  if (keys.length === 0) return [];
  const result = await db.execute(sql`
    SELECT server, config_hash, tools, error, fetched_at::text AS fetched_at FROM mcp_tools
     WHERE server || '/' || config_hash IN (SELECT jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))
     ORDER BY server`);
  return result.rows as unknown as CatalogRow[];
}

/** What this thread warned of already: a server's bad tool is one line, not one per re-read. */
const warned = new Set<string>();

function warnOnce(onWarning: WarningSink | undefined, text: string): void {
  if (!onWarning || warned.has(text)) return;
  if (warned.size > 1000) warned.clear();
  warned.add(text);
  onWarning(notice(text));
}

/** OpenAI-compatible function names: letters, digits, _ and -, at most 64. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function checkedSchema(schema: unknown): Record<string, unknown> | undefined {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return undefined;
  const s = schema as Record<string, unknown>;
  if (s.type !== "object") return undefined;
  if (s.properties !== undefined && (typeof s.properties !== "object" || s.properties === null)) {
    return undefined;
  }
  if (s.required !== undefined && !Array.isArray(s.required)) return undefined;
  try {
    JSON.stringify(s);
  } catch {
    return undefined;
  }
  return s;
}

/**
 * The rows' tools as warren tools named `mcp__<server>__<tool>`, sorted by name. A tool whose name
 * a model cannot take is skipped, and one with a malformed input schema gets `{type: "object"}`,
 * each with one warning line: a server's bad list never breaks a request.
 */
export function buildTools(
  rows: CatalogRow[],
  servers: Record<string, McpServerConfig>,
  onWarning?: WarningSink,
): McpTool[] {
  const tools: McpTool[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    const server = servers[row.server];
    if (!server || !Array.isArray(row.tools)) continue;
    for (const listed of row.tools) {
      const full = `mcp__${row.server}__${String(listed?.name)}`;
      if (typeof listed?.name !== "string" || !TOOL_NAME.test(full)) {
        warnOnce(
          onWarning,
          `MCP tool ${JSON.stringify(full.slice(0, 80))} skipped: its name is not one a model can call`,
        );
        continue;
      }
      let parameters = checkedSchema(listed.inputSchema);
      if (!parameters) {
        warnOnce(
          onWarning,
          `MCP tool ${full}: malformed input schema, offered as {"type":"object"}`,
        );
        parameters = { type: "object" };
      }
      // A name listed twice (one server's list) would make every model request invalid.
      if (seen.has(full)) {
        warnOnce(onWarning, `MCP tool ${full} listed twice: offered once`);
        continue;
      }
      seen.add(full);
      tools.push(mcpTool(full, row.server, server, listed.name, listed.description, parameters));
    }
  }
  return tools.sort((a, b) => a.name.localeCompare(b.name));
}

function mcpTool(
  full: string,
  serverName: string,
  server: McpServerConfig,
  tool: string,
  description: string | undefined,
  parameters: Record<string, unknown>,
): McpTool {
  return {
    name: full,
    // An outside effect like bash: its result commits durably, and a call that was running when
    // its worker died is answered "interrupted" on resume, never run again (runtime/resume.ts).
    outside: true,
    description: description ?? `The ${tool} tool of the MCP server "${serverName}".`,
    parameters,
    async run(args, ctx) {
      if (!args || typeof args !== "object" || Array.isArray(args)) {
        return fail("INVALID_ARGS", `${full} takes an object of arguments`);
      }
      return callMcpTool(
        serverName,
        server,
        tool,
        args as Record<string, unknown>,
        ctx.signal,
        ctx.onWarning,
      );
    },
  };
}

/** How long a thread reuses what it read of mcp_tools before reading it again. */
const REREAD_MS = 2_000;

interface Cached {
  at: number;
  fingerprint: string;
  tools: McpTool[];
  /** The servers that might start when the lists were last read (a newly allowed one is waited for). */
  seen: Set<string>;
  reading?: Promise<McpTool[]>;
}

const cache = new WeakMap<Record<string, McpServerConfig>, Cached>();

/**
 * The MCP tools this thread offers, from the stored lists: read at most every 2 s (after the
 * first read in the background: a request gets the list as last read), and the same array while
 * the lists are unchanged (the model adapter and the context estimate keep what they derive from
 * it). No servers configured: no query at all. A failed read keeps the last list. A server that
 * may start and was not among those of the last read (a `.mcp.json` allowed mid-session) is
 * waited for as on the first read (firstListing), so the next request offers its tools; one no
 * longer allowed has the list read again at once, so the next request no longer offers them.
 */
export async function mcpToolsFor(
  db: Db,
  servers: Record<string, McpServerConfig> | undefined,
  onWarning?: WarningSink,
): Promise<McpTool[]> {
  if (!servers || Object.keys(servers).length === 0) return [];
  let cached = cache.get(servers);
  if (!cached) {
    cached = { at: 0, fingerprint: "", tools: [], seen: new Set() };
    cache.set(servers, cached);
  }
  const entry = cached;
  // Only the servers that may start: a project .mcp.json's once it is allowed (its store is
  // stat'ed per call, read again only when it changed).
  const allowed = allowedOnly(servers);
  const isNew = () => Object.keys(allowed).some((name) => !entry.seen.has(name));
  // One no longer allowed (`warren trust --revoke`): its tools leave this request's list.
  const isGone = () => [...entry.seen].some((name) => !(name in allowed));
  // A read under way may predate the allow: it ends first, then this one waits if still needed.
  if (entry.reading && isNew()) await entry.reading;
  const first = entry.at === 0 || isNew() || isGone();
  if (!first && Date.now() - entry.at < REREAD_MS) return entry.tools;
  entry.reading ??= (first ? firstListing(db, allowed, onWarning) : readCatalog(db, allowed))
    .then((rows) => {
      const fingerprint = rows.map((r) => `${r.server}:${r.config_hash}:${r.fetched_at}`).join(",");
      if (fingerprint !== entry.fingerprint) {
        entry.tools = buildTools(rows, allowed, onWarning);
        entry.fingerprint = fingerprint;
      }
      entry.at = Date.now();
      entry.seen = new Set(Object.keys(allowed));
      return entry.tools;
    })
    .catch(() => entry.tools)
    .finally(() => {
      entry.reading = undefined;
    });
  // Read once: a stale list is offered while the next read runs, so no request waits for it.
  return first ? entry.reading : entry.tools;
}

/** How often the first read looks again for a list the process's refresh is fetching. */
const FIRST_POLL_MS = 200;

/**
 * The first read of a thread: when a server that may start has no stored list for its current
 * configuration, the process's refresh (refresh.ts) is fetching it now; the list (or its error)
 * is waited for, every such server at once, up to the longest of their startup timeouts (and a
 * second for the store). One line says what is waited for: stderr under `-p`, the TUI's notices.
 */
async function firstListing(
  db: Queryable,
  servers: Record<string, McpServerConfig>,
  onWarning?: WarningSink,
): Promise<CatalogRow[]> {
  let rows = await readCatalog(db, servers);
  const missing = (list: CatalogRow[]) => {
    const stored = new Set(list.map((r) => r.server));
    return Object.entries(servers).filter(
      ([name, server]) => !stored.has(name) && !serverRefusal(name, server),
    );
  };
  let waiting = missing(rows);
  if (waiting.length === 0) return rows;
  const longest = Math.max(...waiting.map(([, server]) => server.startupTimeoutMs));
  const names = waiting.map(([name]) => name).sort();
  warnOnce(
    onWarning,
    `waiting for MCP server${names.length === 1 ? "" : "s"} ${names.join(", ")} to list ${names.length === 1 ? "its" : "their"} tools (first start, up to ${Math.round(longest / 1000)} s)`,
  );
  const deadline = Date.now() + longest + 1_000;
  while (waiting.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, FIRST_POLL_MS));
    rows = await readCatalog(db, servers);
    waiting = missing(rows);
  }
  return rows;
}
