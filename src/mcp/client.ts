// One connection to one MCP server on the official SDK: spawned (stdio) or reached (streamable
// HTTP), initialised within the startup timeout, or a one-line error; never a hang.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { escapeControl } from "../text/escape.js";
import { errorMessage } from "../tools/tool.js";
import { serverAllowed } from "./allow.js";
import { isStdio, serverRefusal, type McpServerConfig } from "./config.js";
import { ConfinedStdioTransport } from "./stdio.js";

/** What a server's tools/list gives, as kept in mcp_tools.tools. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
}

export interface Connection {
  client: Client;
  /** Set once the transport closed (the server exited or the connection broke). */
  closed: boolean;
  /**
   * The first of what the server wrote to stderr (stdio), for error messages: a crash says why at
   * its start ("Error: Cannot find module …"), so the text is cut at its end, never its start.
   */
  stderrTail(): string;
  close(): Promise<void>;
}

export class McpStartError extends Error {
  override name = "McpStartError";
}

const STDERR_KEEP = 400;
const PAGES_MAX = 100;

/** The client's name and version as servers see them. */
const CLIENT_INFO = { name: "warren", version: "1" };

/** A server's text as one line for people: its control characters shown as escapes, never raw. */
function oneLine(text: string, max = 300): string {
  const line = escapeControl(text.replace(/\s+/g, " ").trim());
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Connects to `server` (spawning it for stdio), within its startup timeout and `signal`. Throws
 * McpStartError with one line (the cause, and the last of the server's stderr) on failure.
 */
export async function connect(
  name: string,
  server: McpServerConfig,
  signal?: AbortSignal,
): Promise<Connection> {
  // The one place a server is started or reached: a project .mcp.json's server not allowed (or
  // whose file changed since it was allowed) never gets this far.
  if (!serverAllowed(server)) {
    throw new McpStartError(notAllowedLine(name, server.allow!.file));
  }
  // Nor one that would run a file an agent could have written (looked up now: planted since start?).
  const refused = serverRefusal(name, server);
  if (refused) throw new McpStartError(refused);
  let tail = "";
  let transport: Transport;
  if (isStdio(server)) {
    // In the sandbox unless the person's config says otherwise (stdio.ts).
    const stdio = new ConfinedStdioTransport(name, server);
    // Drained (a full pipe would block the server); its start kept, for error messages.
    stdio.stderr.on("data", (chunk: Buffer | string) => {
      if (tail.length < STDERR_KEEP) tail += String(chunk).slice(0, STDERR_KEEP - tail.length);
    });
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers },
    });
  }
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const conn: Connection = {
    client,
    closed: false,
    stderrTail: () => oneLine(tail),
    close: () => client.close().catch(() => undefined),
  };
  client.onclose = () => {
    conn.closed = true;
  };
  // The SDK reports transport errors here too; they surface as the failed request, so nothing more.
  client.onerror = () => undefined;
  const timeoutMs = server.startupTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new McpStartError(`did not start within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  const aborted = new Promise<never>((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
  });
  try {
    await Promise.race([
      client.connect(transport, { timeout: timeoutMs, ...(signal ? { signal } : {}) }),
      deadline,
      aborted,
    ]);
    return conn;
  } catch (err) {
    await conn.close();
    if (signal?.aborted) throw err;
    const why = err instanceof McpStartError ? err.message : oneLine(errorMessage(err));
    const stderr = conn.stderrTail();
    throw new McpStartError(
      `MCP server "${name}" could not start: ${why}${stderr ? ` (stderr: ${stderr})` : ""}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

export function notAllowedLine(name: string, file: string): string {
  return `MCP server "${name}" comes from ${file}, which is not allowed (or changed since it was): \`warren mcp allow\` or /mcp allow starts its servers`;
}

/** Every tool the server lists, page by page. */
export async function listAllTools(conn: Connection, timeoutMs: number): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < PAGES_MAX; page++) {
    // Asked with the loose result schema, not listTools(): the SDK's strict one rejects the
    // whole list for one tool's malformed schema, and buildTools deals with that tool alone.
    const result = (await conn.client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      ResultSchema,
      { timeout: timeoutMs },
    )) as { tools?: unknown; nextCursor?: unknown };
    if (!Array.isArray(result.tools)) throw new Error("tools/list answered no list of tools");
    for (const t of result.tools as Record<string, unknown>[]) {
      if (!t || typeof t !== "object") continue;
      tools.push({
        name: String(t.name),
        ...(typeof t.description === "string" ? { description: t.description } : {}),
        inputSchema: t.inputSchema,
      });
    }
    cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    if (!cursor) break;
  }
  return tools;
}
