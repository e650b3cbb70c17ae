// An approval's round trip: from just before a request is written (requestApproval, then the
// `? needs approval` activity, as the gate writes them) to the request being in the state of a
// TUI controller that follows the tree through its own pool and LISTEN connection (the feed, as a
// TUI in another process sees it), beside the raw INSERT + NOTIFY round trip measured in the same
// run, samples interleaved so load drift hits both.
import { sql } from "drizzle-orm";
import { answerApproval, requestApproval } from "../src/approvals/approvals.js";
import { createTree } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb } from "../src/db/client.js";
import { openFeed } from "../src/feed/feed.js";
import type { Feed } from "../src/feed/types.js";
import { setActivity } from "../src/feed/publish.js";
import { createController, type Controller } from "../src/ui/controller.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { nowMs, percentile, untilAborted } from "./stats.js";
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
        new Promise<number>((resolve) => {
          const check = () => {
            if (!ok()) return;
            onChange = undefined;
            resolve(nowMs());
          };
          onChange = check;
          check();
        }),
        signal,
      );

    let sequence = 0;
    const probe = async (): Promise<number> => {
      const n = sequence++;
      let id = -1;
      const shown = until(() => ui.state.approvals.some((a) => a.id === id));
      const start = nowMs();
      const request = await requestApproval(writerDb, {
        treeId: root.id,
        agentId: root.id,
        callKey: `bench-${n}`,
        tool: "bash",
        subject: `echo ${n}`,
        arguments: JSON.stringify({ command: `echo ${n}` }),
        pattern: "echo *",
      });
      id = request.id;
      await setActivity(writerDb, root.id, `? needs approval ${id}: bash: echo ${n}`);
      const at = await shown;
      // Answered and cleared before the next sample, so no read of this one overlaps it.
      const gone = until(() => ui.state.approvals.length === 0);
      await answerApproval(writerDb, id, { allow: true, by: "bench" }, root.id);
      await setActivity(writerDb, root.id, `bash: echo ${n}`);
      await gone;
      return at - start;
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
    controller?.close();
    await feed?.close();
    await bus?.close();
    await raw?.close();
    await Promise.all([closeDb(writerDb), closeDb(tuiDb)]);
  }
}
