// The background refresh of the MCP servers' tool lists when a process starts (runtime/pool.ts):
// its own one-connection pool, never awaited by a turn; a process that stops meanwhile waits for
// it at most a second (a server that is slow to start is simply asked again next time).
import { createDb, closeDb } from "../db/client.js";
import type { WarningSink } from "../db/warning.js";
import type { McpServerConfig } from "./config.js";
import { refreshCatalog } from "./catalog.js";

const STOP_WAIT_MS = 1_000;

export interface CatalogRefresh {
  done: Promise<void>;
  stop(): Promise<void>;
}

export function startCatalogRefresh(
  url: string,
  servers: Record<string, McpServerConfig> | undefined,
  onWarning?: WarningSink,
): CatalogRefresh | undefined {
  if (!servers || Object.keys(servers).length === 0) return undefined;
  const db = createDb(url, { max: 1, applicationName: "warren-mcp" });
  const done = refreshCatalog(db, servers, onWarning).catch(() => undefined);
  const closed = done.then(() => closeDb(db)).catch(() => undefined);
  return {
    done,
    async stop() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        closed,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, STOP_WAIT_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      await closeDb(db).catch(() => undefined);
    },
  };
}
