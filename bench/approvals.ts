// An approval's round trip: from just before another process writes a request (requestApproval,
// then the `? needs approval` activity, as the gate writes them; approval-asker.ts) to the request
// being in the state of a TUI controller following the tree through its own pool and LISTEN
// connection (the feed), timed on the wall clock both processes share, beside the raw INSERT +
// NOTIFY round trip measured in the same run, samples interleaved so load drift hits both.
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { answerApproval } from "../src/approvals/approvals.js";
import { createTree } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb } from "../src/db/client.js";
import { openFeed } from "../src/feed/feed.js";
import type { Feed } from "../src/feed/types.js";
import { setActivity } from "../src/feed/publish.js";
import { createController, type Controller } from "../src/ui/controller.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { percentile, untilAborted } from "./stats.js";
import { RawNotify } from "./wake-latency.js";

const WARMUP = 20;
const SAMPLES = 200;

export async function approvalRoundTrip(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const writerDb = createDb(url, { max: 2, applicationName: "warren-bench-asker" });
  const tuiDb = createDb(url, { max: 2, applicationName: "warren-bench-tui" });
  let raw: RawNotify | undefined;
  let bus: Bus | undefined;
  let feed: Feed | undefined;
  let controller: Controller | undefined;
  let asker: ChildProcess | undefined;
  try {
    raw = await RawNotify.open(url);
    bus = await createBus(url);
    const root = await createTree(writerDb, { name: "asker" });
    await writerDb.execute(sql`update agents set state = 'waiting' where id = ${root.id}`);
    feed = await openFeed(tuiDb, bus, root.id);
    // The controller calls onChange after each read; the probe checks what it holds.
    let onChange: (() => void) | undefined;
    controller = createController({
      db: tuiDb,
      feed,
      rootId: root.id,
      onChange: () => onChange?.(),
      onError: (message) => log(`approvals: ${message}`),
    });
    await controller.start();
    const ui = controller;
    const until = (ok: () => boolean) =>
      untilAborted(
        new Promise<void>((resolve) => {
          const check = () => {
            if (!ok()) return;
            onChange = undefined;
            resolve();
          };
          onChange = check;
          check();
        }),
        signal,
      );

    // The asker runs in a process of its own (approval-asker.ts): it says, on the wall clock
    // both processes share, when it began writing each request.
    asker = fork(path.join(path.dirname(fileURLToPath(import.meta.url)), "approval-asker.js"), [
      url,
      root.id,
    ]);
    const child = asker;
    const replies = new Map<number, (reply: { id: number; startWall: number }) => void>();
    const ready = new Promise<void>((resolve) => {
      child.on("message", (m: { ready?: boolean; n?: number; id?: number; startWall?: number }) => {
        if (m.ready) return resolve();
        replies.get(m.n!)?.({ id: m.id!, startWall: m.startWall! });
      });
    });
    await untilAborted(ready, signal);
    const wallNow = () => performance.timeOrigin + performance.now();

    let sequence = 0;
    const probe = async (): Promise<number> => {
      const n = sequence++;
      const key = `bench-${n}`;
      const shown = until(() => ui.state.approvals.some((a) => a.call_key === key));
      const written = new Promise<{ id: number; startWall: number }>((resolve) =>
        replies.set(n, resolve),
      );
      child.send({ n });
      const { id, startWall } = await untilAborted(written, signal);
      await shown;
      const at = wallNow();
      replies.delete(n);
      // Answered and cleared before the next sample, so no read of this one overlaps it.
      const gone = until(() => ui.state.approvals.length === 0);
      await answerApproval(writerDb, id, { allow: true, by: "bench" }, root.id);
      await setActivity(writerDb, root.id, `bash: echo ${n}`);
      await gone;
      return at - startWall;
    };

    const rawMs: number[] = [];
    const shownMs: number[] = [];
    log(`approval round trip: ${WARMUP} warm-up + ${SAMPLES} requests`);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      signal.throwIfAborted();
      const r = await raw.roundTrip(signal);
      const w = await probe();
      if (i >= WARMUP) {
        rawMs.push(r);
        shownMs.push(w);
      }
    }
    return [
      row(
        "approval shown p50",
        percentile(shownMs, 50),
        "ms",
        "raw INSERT+NOTIFY p50",
        percentile(rawMs, 50),
      ),
      row(
        "approval shown p99",
        percentile(shownMs, 99),
        "ms",
        "raw INSERT+NOTIFY p99",
        percentile(rawMs, 99),
      ),
    ];
  } finally {
    asker?.send("stop");
    controller?.close();
    await feed?.close();
    await bus?.close();
    await raw?.close();
    await Promise.all([closeDb(writerDb), closeDb(tuiDb)]);
  }
}
