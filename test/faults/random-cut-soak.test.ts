// A short soak (about a minute): a `warren worker` reaches Postgres through a proxy that drops the
// replies of random committed writes and cuts every connection at random moments, while tree after
// tree of agents mail each other in a ring (4 children × 4 rounds of send + wait, then each reports
// to the root). Protects exactly-once and liveness under any unlucky timing, not only the moments
// the other fault tests pick: every tree finishes, and the invariant checker passes for each.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { sleep } from "../support/agents.js";
import type { FakeModel, RecordedRequest } from "../support/fake-model.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { startWarren, warrenEnv, type WarrenRun } from "../support/warren.js";
import { isFirst, lastToolName, lastToolResults, useE2E } from "../runtime/e2e-support.js";
import { treeViolations, type ExpectedMail } from "./invariants.js";
import type { ChildProcess } from "node:child_process";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);
const RING = ["a", "b", "c", "d"];
const ROUNDS = 4;
const SOAK_MS = 55_000;
const SEED = Number(process.env.WARREN_SOAK_SEED ?? Date.now() % 1_000_000);
let worker: { child: ChildProcess; done: Promise<WarrenRun> } | undefined;

afterEach(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill("SIGKILL");
  worker = undefined;
});

const ringBody = (name: string, round: number) => `<ring ${name}.${round}>`;
const doneBody = (name: string) => `<done ${name}>`;

function ringMail(): ExpectedMail[] {
  return RING.flatMap((name, i) => [
    ...Array.from({ length: ROUNDS }, (_, k) => ({
      from: name,
      to: RING[(i + 1) % RING.length]!,
      body: ringBody(name, k + 1),
    })),
    { from: name, to: "root", body: doneBody(name) },
  ]);
}

/** The `send` calls this agent's model has made so far, by their message. */
function sent(req: RecordedRequest): string[] {
  return req.messages.flatMap((m) =>
    (m.tool_calls ?? [])
      .filter((c) => c.function.name === "send")
      .map((c) => (JSON.parse(c.function.arguments) as { message: string }).message),
  );
}

function shown(req: RecordedRequest, pattern: RegExp): Set<string> {
  const found = new Set<string>();
  for (const m of req.messages) {
    if (m.role !== "tool" && m.role !== "user") continue;
    for (const hit of (m.content ?? "").match(pattern) ?? []) found.add(hit);
  }
  return found;
}

/** Each child: send round k to the next, wait for one, ROUNDS times; then report to the root. */
function scriptRing(fake: FakeModel): void {
  const wait = { toolCalls: [{ name: "wait", arguments: { timeout: 40 } }] };
  const send = (to: string, message: string) => ({
    toolCalls: [{ name: "send", arguments: { to, message } }],
  });
  fake.script([
    {
      agent: "root",
      match: isFirst,
      times: Infinity,
      reply: {
        toolCalls: RING.map((name) => ({
          name: "fork",
          arguments: { name, prompt: `ring ${name}`, context: "fresh" },
        })),
      },
    },
    {
      agent: "root",
      match: (req) => ["fork", "wait"].includes(lastToolName(req) ?? ""),
      times: Infinity,
      reply: (req) =>
        shown(req, /<done \w>/g).size >= RING.length ? { text: "ring closed" } : wait,
    },
    ...RING.flatMap((name, i) => {
      const next = RING[(i + 1) % RING.length]!;
      return [
        { agent: name, match: isFirst, times: Infinity, reply: send(next, ringBody(name, 1)) },
        {
          agent: name,
          match: (req: RecordedRequest) => ["send", "wait"].includes(lastToolName(req) ?? ""),
          times: Infinity,
          reply: (req: RecordedRequest) => {
            const mine = sent(req);
            if (lastToolName(req) === "send") {
              // A sibling forked after this child started is not there yet: send again.
              const result = lastToolResults(req).at(-1)?.value as { error?: unknown } | null;
              if (result?.error)
                return send(mine.at(-1) === doneBody(name) ? "parent" : next, mine.at(-1)!);
              return mine.includes(doneBody(name)) ? { text: `${name} done` } : wait;
            }
            const rounds = new Set(mine).size;
            return rounds < ROUNDS
              ? send(next, ringBody(name, rounds + 1))
              : send("parent", doneBody(name));
          },
        },
      ];
    }),
  ]);
}

async function treeSettled(db: Db, treeId: string): Promise<boolean> {
  const rows = await db.execute<{ busy: number }>(sql`
    select count(*) filter (where state in ('running', 'waiting'))::int as busy
      from agents where tree_id = ${treeId}`);
  return rows.rows[0]!.busy === 0;
}

describe("random cuts and lost commit replies under a mailing ring", () => {
  it("every tree finishes, each exactly once", { timeout: 150_000 }, async () => {
    const db = e2e.db();
    const url = db.$client.options.connectionString!;
    scriptRing(e2e.fake());
    worker = startWarren(
      ["worker"],
      warrenEnv({
        databaseUrl: proxy().urlFor(url),
        modelUrl: e2e.fake().baseURL,
        extra: { WARREN_LEASE_SECONDS: "5", WARREN_WORKER_THREADS: "2" },
      }),
    );

    // Faults: about one committed write in 25 loses its reply; every 2–7 s everything is cut.
    proxy().dropCommits({ probability: 0.04, seed: SEED });
    let random = SEED;
    const next = () => (random = (random * 1103515245 + 12345) % 2147483648) / 2147483648;
    let cuts = 0;
    let faulting = true;
    const cutter = (async () => {
      while (faulting) {
        await sleep(2_000 + next() * 5_000);
        if (faulting) {
          proxy().cut();
          cuts++;
        }
      }
    })();

    const started = Date.now();
    const trees: string[] = [];
    const stuck: string[] = [];
    while (Date.now() - started < SOAK_MS) {
      const root = await createTree(db, { prompt: "close the ring", cwd: process.cwd() });
      trees.push(root.id);
      const deadline = Date.now() + 45_000;
      while (!(await treeSettled(db, root.id)) && Date.now() < deadline) await sleep(100);
      if (!(await treeSettled(db, root.id))) {
        stuck.push(`tree ${trees.length} (${root.id}) still busy after 45 s`);
        break;
      }
    }
    faulting = false;
    proxy().stopDropping();
    await cutter;
    worker.child.kill("SIGTERM");
    const stopped = await Promise.race([worker.done, sleep(10_000).then(() => undefined)]);

    const problems = [...stuck];
    if (!stopped) problems.push("the worker did not stop within 10 s of SIGTERM");
    if (trees.length < 2) problems.push(`only ${trees.length} tree(s) in ${SOAK_MS} ms`);
    for (const [i, treeId] of trees.entries()) {
      const violations = await treeViolations(db, {
        treeId,
        mail: ringMail(),
        fake: e2e.fake(),
        stderr: i === 0 ? [stopped?.stderr ?? ""] : [],
        modelCalls: "again-after-takeover",
      });
      problems.push(...violations.map((v) => `tree ${i + 1}: ${v}`));
    }
    const dropped = proxy().dropped();
    const context = [
      `seed ${SEED} (WARREN_SOAK_SEED), ${trees.length} trees, ${cuts} cuts,`,
      `dropped the reply of ${dropped.length} of ${proxy().commits()} committed writes:`,
      ...dropped.map((d) => `  ${d.statements.join(" ; ").slice(0, 200)}`),
      `--- worker stderr\n${stopped?.stderr ?? "(still running)"}`,
    ];
    expect(problems, [...problems, "--- context", ...context].join("\n")).toEqual([]);
  });
});
