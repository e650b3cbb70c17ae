// No thread dies of a database error (SPEC §5). A pg client checked out of its pool (inside a
// transaction) that loses its connection emits 'error' with no pool listener attached; unheard,
// that ends the worker thread ("a worker thread stopped on an error: read ECONNRESET") and its
// agents wait for their leases to expire with nothing to resume them. Here: a `warren -p` fan-in
// whose connections are cut again and again at random moments finishes with no thread stopped; a
// worker thread whose client errors between two statements of a transaction lives on; an escaped
// transient error is survived by the thread's last resort; and a thread that dies anyway (a crash
// injected through WARREN_TEST_CRASH_FILE) is restarted and its agents finish.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/client.js";
import { sleep } from "../support/agents.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { treeAgents, useE2E } from "../runtime/e2e-support.js";
import { expectExactlyOnce, scriptSleepyFanIn, until } from "./sleepy-fan-in.js";

const e2e = useE2E();
let proxy: TcpProxy;

beforeEach(async () => {
  const target = new URL(e2e.db().$client.options.connectionString!);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
});
afterEach(async () => {
  await proxy.close();
});

/** `bash` calls so far, in every tree of this file's database. */
async function bashCalls(db: Db): Promise<number> {
  const rows = await db.execute<{ n: number }>(sql`
    select count(*)::int as n from events where kind = 'tool_call' and data->>'name' = 'bash'`);
  return rows.rows[0]!.n;
}

/**
 * Starts a `-p` fan-in and resolves once its three children are inside `bash sleep`, with the
 * run (wrapped: an async function returning the promise itself would wait for it).
 */
async function fanInAsleep(env: Record<string, string>) {
  scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 4, waitSeconds: 60 });
  const before = await bashCalls(e2e.db());
  const run = e2e.prompt("fan out", { timeout: 50, env });
  await until(async () => (await bashCalls(e2e.db())) === before + 3, "three children in bash");
  return { run };
}

const stderrLines = (stderr: string) => stderr.split("\n").filter((l) => l.trim());

describe("no thread dies of a database error", () => {
  it(
    "a -p fan-in whose connections are cut at random moments finishes, no thread stopped",
    { timeout: 90_000 },
    async () => {
      scriptSleepyFanIn(e2e.fake(), { sleepSeconds: 3, waitSeconds: 60 });
      const url = e2e.db().$client.options.connectionString!;
      const trees = () =>
        e2e.db().execute<{ n: number }>(sql`
      select count(*)::int as n from agents where parent_id is null`);
      const treesBefore = (await trees()).rows[0]!.n;
      let done = false;
      const run = e2e
        .prompt("fan out", {
          timeout: 50,
          env: {
            DATABASE_URL: proxy.urlFor(url),
            WARREN_LEASE_SECONDS: "6",
            WARREN_WORKER_THREADS: "2",
          },
        })
        .finally(() => (done = true));
      // Once the run has started (its startup checks — connect, migrate — fail fast by design),
      // cuts at random moments for as long as it lasts (bounded): some land while a client is
      // checked out for a transaction, between its statements or during one.
      await until(async () => done || (await trees()).rows[0]!.n > treesBefore, "the tree");
      let cuts = 0;
      while (!done && cuts < 40) {
        await sleep(100 + Math.random() * 400);
        if (done) break;
        proxy.cutAll();
        cuts++;
      }
      const result = await run;

      expect(result.stderr).not.toMatch(/worker thread stopped/);
      expect(result.stderr).not.toMatch(/Failed query|select |insert |update /i);
      expect(result.code, result.stderr).toBe(0);
      expect(result.json?.text).toBe("all reported");
      // Only the outage's own lines: reconnecting, the listener's when a cut caught it connecting,
      // and a turn stopped because its lease went unrenewed through the cuts (effects bound to
      // the lease: its tool processes stop before another worker may take it over).
      stderrLines(result.stderr).forEach((line) =>
        expect(line).toMatch(
          /^warren: ((database unreachable|notifications unavailable) \(.+\); |(agent [0-9a-f]{8}|\d+ agents): lease not renewed for \d+ s; )/,
        ),
      );
      expect(cuts).toBeGreaterThan(3);
      // Every turn ended: every agent idle, no lease left. (Exactly-once under cuts that lose a
      // commit's reply is another guarantee, with its own tests.)
      const tree = await treeAgents(e2e.db(), result.json!.tree_id);
      expect(tree.map((a) => a.state)).toEqual(["idle", "idle", "idle", "idle"]);
      expect(tree.map((a) => a.lease_owner)).toEqual([null, null, null, null]);
    },
  );

  it("a worker thread whose client errors between two statements of a transaction lives on", async () => {
    const client = path.resolve(
      path.dirname(fileURLToPath(import.meta.url)),
      "../../dist/src/db/client.js",
    );
    const url = proxy.urlFor(e2e.db().$client.options.connectionString!);
    // A thread that opens a transaction through warren's pool, waits while the test cuts its
    // connection, then tries its next statement.
    const worker = new Worker(
      `
      const { parentPort, workerData } = require("node:worker_threads");
      (async () => {
        const { createDb, closeDb } = await import(workerData.client);
        const db = createDb(workerData.url, { max: 1 });
        const cut = new Promise((resolve) => parentPort.once("message", resolve));
        const outcome = await db
          .transaction(async (tx) => {
            await tx.execute("select 1");
            parentPort.postMessage({ type: "in-transaction" });
            await cut;
            await new Promise((resolve) => setTimeout(resolve, 200));
            await tx.execute("select 2");
          })
          .then(() => "committed", (err) => "failed: " + err.message);
        const after = await db.execute("select 3 as n").then((r) => r.rows[0].n);
        await closeDb(db);
        parentPort.postMessage({ type: "alive", outcome, after });
      })();
      `,
      { eval: true, workerData: { client, url } },
    );
    const messages: { type: string; outcome?: string; after?: number }[] = [];
    let errored: Error | undefined;
    worker.on("message", (m: (typeof messages)[number]) => messages.push(m));
    worker.on("error", (err) => (errored = err));
    const exited = new Promise<number>((resolve) => worker.once("exit", resolve));
    while (!messages.some((m) => m.type === "in-transaction")) {
      if (errored) throw errored;
      await sleep(20);
    }
    proxy.cutAll();
    worker.postMessage("cut");
    const code = await exited;

    expect(errored?.message).toBeUndefined();
    expect(code).toBe(0);
    const alive = messages.find((m) => m.type === "alive");
    expect(alive?.outcome).toMatch(/^failed: /);
    expect(alive?.after).toBe(3);
  });

  it("a transient error that escapes everything is survived by the thread", async () => {
    const crashFile = path.join(mkdtempSync(path.join(os.tmpdir(), "warren-crash-")), "crash");
    const { run } = await fanInAsleep({
      WARREN_LEASE_SECONDS: "3",
      WARREN_TEST_CRASH_FILE: crashFile,
    });
    // The thread throws an ECONNRESET from a timer: an uncaught exception nothing else hears.
    writeFileSync(crashFile, "transient");
    const result = await run;

    expect(result.stderr).not.toMatch(/worker thread stopped/);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json?.text).toBe("all reported");
    // The thread's one line for it, as for any outage.
    expect(stderrLines(result.stderr)).toEqual([
      "warren: database unreachable (connection reset); retrying",
    ]);
    await expectExactlyOnce(e2e.db(), result.json!.tree_id);
  });
});

describe("a worker thread that dies anyway", () => {
  it("is restarted, and its agents finish", async () => {
    const crashFile = path.join(mkdtempSync(path.join(os.tmpdir(), "warren-crash-")), "crash");
    // One thread: it runs all four agents, so everything must resume on its replacement.
    const { run } = await fanInAsleep({
      WARREN_LEASE_SECONDS: "3",
      WARREN_TEST_CRASH_FILE: crashFile,
    });
    writeFileSync(crashFile, "crash");
    const result = await run;

    expect(result.code, result.stderr).toBe(0);
    expect(result.json?.text).toBe("all reported");
    expect(stderrLines(result.stderr)).toEqual([
      "warren: a worker thread stopped on an error: a crash injected by the test; restarting it",
    ]);
    await expectExactlyOnce(e2e.db(), result.json!.tree_id);
  });
});
