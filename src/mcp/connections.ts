// This thread's connections to MCP servers (SPEC §9): one per server, opened when one of this
// thread's agents first calls one of its tools and shared by all of them. warren runs agents in
// worker threads (runtime/pool.ts), each with its own module state, so "one per process" is one
// per worker thread (one thread on a machine with two cores or fewer). A server that cannot start
// or dies costs one warning line; its calls answer a clear error, and the next call starts it
// again (once: after two failed starts in a row it is left alone for a minute).
import { McpError, ErrorCode as McpCode } from "@modelcontextprotocol/sdk/types.js";
import { notice, type WarningSink } from "../db/warning.js";
import { errorMessage, fail, type ToolOutcome } from "../tools/tool.js";
import { serverAllowed } from "./allow.js";
import { connect, McpStartError, notAllowedLine, type Connection } from "./client.js";
import { configHash, type McpServerConfig } from "./config.js";
import { formatResult } from "./result.js";

const FAILED_STARTS_MAX = 2;
const COOLDOWN_MS = 60_000;

interface ServerState {
  /** The connection, or the start in flight; undefined: not started (or stopped). */
  conn: Promise<Connection> | undefined;
  failedStarts: number;
  lastError: string | undefined;
  retryAt: number;
}

const servers = new Map<string, ServerState>();

function stateOf(name: string, server: McpServerConfig): ServerState {
  const key = `${name}\u0000${configHash(server)}`;
  let state = servers.get(key);
  if (!state) {
    state = { conn: undefined, failedStarts: 0, lastError: undefined, retryAt: 0 };
    servers.set(key, state);
  }
  return state;
}

async function connection(
  name: string,
  server: McpServerConfig,
  state: ServerState,
  onWarning: WarningSink | undefined,
): Promise<Connection> {
  if (state.conn) {
    const conn = await state.conn;
    if (!conn.closed) return conn;
    // Died since: one line, and it starts again below.
    onWarning?.(
      notice(
        `MCP server "${name}" stopped${conn.stderrTail() ? ` (${conn.stderrTail()})` : ""}; restarting it`,
      ),
    );
    state.conn = undefined;
  }
  if (state.failedStarts >= FAILED_STARTS_MAX && Date.now() < state.retryAt) {
    throw new McpStartError(state.lastError ?? `MCP server "${name}" could not start`);
  }
  // Not bound to one call's signal: the connection is shared, and an interrupted call must not
  // cut another agent's start.
  const started = connect(name, server);
  state.conn = started;
  try {
    const conn = await started;
    state.failedStarts = 0;
    state.lastError = undefined;
    return conn;
  } catch (err) {
    if (state.conn === started) state.conn = undefined;
    state.failedStarts++;
    state.lastError = errorMessage(err);
    if (state.failedStarts >= FAILED_STARTS_MAX) state.retryAt = Date.now() + COOLDOWN_MS;
    onWarning?.(notice(state.lastError));
    throw err;
  }
}

/**
 * Calls `tool` on `server` with `args`: the outcome the model reads, never a throw (an interrupt
 * included: the SDK sends the server notifications/cancelled when `signal` fires).
 */
export async function callMcpTool(
  name: string,
  server: McpServerConfig,
  tool: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  onWarning?: WarningSink,
): Promise<ToolOutcome> {
  const state = stateOf(name, server);
  // Its file no longer allowed (`warren trust --revoke` mid-session): nothing more reaches it,
  // and a connection this thread holds is closed (connect() refuses to start it again).
  if (!serverAllowed(server)) {
    const held = state.conn;
    state.conn = undefined;
    void held?.then((conn) => conn.close()).catch(() => undefined);
    return fail("INTERNAL", `${notAllowedLine(name, server.allow!.file)}; nothing was run`);
  }
  let conn: Connection;
  try {
    conn = await abortable(connection(name, server, state, onWarning), signal);
  } catch (err) {
    if (signal.aborted) return fail("INTERNAL", "interrupted before the MCP server started");
    return fail("INTERNAL", `${errorMessage(err)}; nothing was run`);
  }
  try {
    const result = await conn.client.callTool({ name: tool, arguments: args }, undefined, {
      signal,
      timeout: server.callTimeoutMs,
    });
    return formatResult(result);
  } catch (err) {
    if (signal.aborted) return fail("INTERNAL", "interrupted (the MCP server was told to cancel)");
    if (err instanceof McpError && err.code === McpCode.RequestTimeout) {
      return fail(
        "INTERNAL",
        `MCP server "${name}" did not answer ${tool} within ${server.callTimeoutMs / 1000} s (call_timeout_seconds); the call may have had effects`,
      );
    }
    if (conn.closed || (err instanceof McpError && err.code === McpCode.ConnectionClosed)) {
      if (state.conn) state.conn = undefined;
      const tail = conn.stderrTail();
      onWarning?.(
        notice(`MCP server "${name}" stopped during a call; it is restarted on the next`),
      );
      return fail(
        "INTERNAL",
        `MCP server "${name}" stopped during the call${tail ? ` (stderr: ${tail})` : ""}; it is restarted on the next call, and this call may have had effects`,
      );
    }
    const message = err instanceof McpError ? err.message : errorMessage(err);
    // An unknown tool or bad arguments, as the server answered them.
    return fail(
      err instanceof McpError && err.code === McpCode.InvalidParams ? "INVALID_ARGS" : "INTERNAL",
      `MCP server "${name}": ${message.split("\n")[0]!.slice(0, 500)}`,
    );
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Closes this thread's connections (its servers exit): at thread stop, and between tests. */
export async function closeMcpConnections(): Promise<void> {
  const all = [...servers.values()];
  servers.clear();
  await Promise.all(
    all.map(async (s) => {
      const conn = await s.conn?.catch(() => undefined);
      await conn?.close();
    }),
  );
}

/** What `warren mcp list` and `/mcp` show of this thread's connections. */
export function connectionState(name: string, server: McpServerConfig): string | undefined {
  const state = servers.get(`${name}\u0000${configHash(server)}`);
  if (!state) return undefined;
  if (state.conn) return "connected";
  return state.lastError ? `failed: ${state.lastError}` : undefined;
}
