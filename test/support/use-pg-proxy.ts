// The fault-injection proxy (pg-proxy.ts) in front of the test database, a fresh one for each
// test of a file and closed after it (after the file's own afterEach hooks: vitest runs them last
// registered first).
import { afterEach, beforeEach } from "vitest";
import { startPgProxy, type PgProxy } from "./pg-proxy.js";

export function usePgProxy(databaseUrl: () => string): () => PgProxy {
  let proxy: PgProxy | undefined;
  beforeEach(async () => {
    const target = new URL(databaseUrl());
    proxy = await startPgProxy(target.hostname, Number(target.port || 5432));
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });
  return () => {
    if (!proxy) throw new Error("the proxy exists only inside a test");
    return proxy;
  };
}
