// What `warren mcp list` and the TUI's `/mcp` show: each configured server, its state and tools.
import type { Queryable } from "../db/client.js";
import { escapeControl } from "../text/escape.js";
import { serverAllowed } from "./allow.js";
import { isStdio, serverRefusal, type McpServerConfig } from "./config.js";
import { buildTools, readCatalog, type CatalogRow } from "./catalog.js";

export interface ServerListing {
  name: string;
  transport: "stdio" | "http";
  /** The command line or URL. */
  target: string;
  /**
   * "ok", "failed" (the last fetch failed), "not fetched yet", "not allowed" (a project
   * .mcp.json's server before the person allows that file), or "refused" (it would run a file an
   * agent could have written; `error` says which).
   */
  state: "ok" | "failed" | "not fetched yet" | "not allowed" | "refused";
  /** The .mcp.json it comes from (a project's server). */
  file?: string;
  error: string | null;
  fetched_at: string | null;
  tools: string[];
}

export function listingOf(
  servers: Record<string, McpServerConfig>,
  rows: CatalogRow[],
): ServerListing[] {
  const byName = new Map(rows.map((r) => [r.server, r]));
  return Object.entries(servers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, server]) => {
      const allowed = serverAllowed(server);
      const refused = allowed ? serverRefusal(name, server) : undefined;
      const row = allowed && !refused ? byName.get(name) : undefined;
      // As agents are offered them: a tool with a name no model can take is left out.
      const tools = row ? buildTools([row], servers).map((t) => t.name) : [];
      return {
        name,
        transport: isStdio(server) ? "stdio" : "http",
        target: isStdio(server) ? [server.command, ...server.args].join(" ") : server.url,
        ...(server.allow ? { file: server.allow.file } : {}),
        state: !allowed
          ? "not allowed"
          : refused
            ? "refused"
            : !row
              ? "not fetched yet"
              : row.error
                ? "failed"
                : "ok",
        error: refused ?? row?.error ?? null,
        fetched_at: row?.fetched_at ?? null,
        tools: tools.sort(),
      };
    });
}

export async function listServers(
  db: Queryable,
  servers: Record<string, McpServerConfig>,
): Promise<ServerListing[]> {
  return listingOf(servers, await readCatalog(db, servers));
}

/**
 * The listing as lines of text (the CLI's and the TUI's form). A project .mcp.json's command
 * line, a server's error: control characters escaped, never raw on the person's terminal.
 */
export function listingLines(listing: ServerListing[]): string[] {
  if (listing.length === 0) {
    return ['no MCP servers configured ("mcp_servers" in the config file, or a project .mcp.json)'];
  }
  const lines: string[] = [];
  for (const s of listing) {
    const state =
      s.state === "ok"
        ? `${s.tools.length} tool${s.tools.length === 1 ? "" : "s"}`
        : s.state === "failed"
          ? `failed: ${s.error}${s.tools.length ? ` (offering the ${s.tools.length} tools listed before)` : ""}`
          : s.state === "not allowed"
            ? `not allowed (from ${s.file}; \`warren mcp allow\` or /mcp allow starts it)`
            : s.state === "refused"
              ? (s.error ?? "refused")
              : "not fetched yet (offers no tools until it is)";
    lines.push(`${s.name}  ${s.transport}  ${s.target}  — ${state}`);
    for (const t of s.tools) lines.push(`  ${t}`);
  }
  return lines.map((line) => escapeControl(line));
}
