// The run of issue 12: the root forks six children in one response, each child sends its parent
// five mails in one response, and the root takes them one `wait` per call until it has all 30.
// Many small committed writes (forks, sends, consuming waits, assistant events) in a short time.
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { Db } from "../../src/db/client.js";
import type { FakeModel, RecordedRequest } from "../support/fake-model.js";
import { after, isFirst, lastToolName } from "../runtime/e2e-support.js";
import { treeViolations, type ExpectedMail, type TreeExpectations } from "./invariants.js";

export const STORM_CHILDREN = ["c1", "c2", "c3", "c4", "c5", "c6"];
export const MAILS_PER_CHILD = 5;
export const STORM_MAILS = STORM_CHILDREN.length * MAILS_PER_CHILD;
/** The root's answer once its model has been shown every mail. */
export const ALL_RECEIVED = `received all ${STORM_MAILS} mails`;

/** Bodies are unique and never a prefix of one another. */
const body = (child: string, n: number) => `<note ${child}.${n}>`;
const BODY = /<note c\d+\.\d+>/g;

export function stormMail(): ExpectedMail[] {
  return STORM_CHILDREN.flatMap((child) =>
    Array.from({ length: MAILS_PER_CHILD }, (_, i) => ({
      from: child,
      to: "root",
      body: body(child, i + 1),
    })),
  );
}

/** Distinct mail bodies in the tool results and user messages the root's model was sent. */
function bodiesShown(req: RecordedRequest): Set<string> {
  const found = new Set<string>();
  for (const m of req.messages) {
    if (m.role === "tool" || m.role === "user") {
      for (const hit of (m.content ?? "").match(BODY) ?? []) found.add(hit);
    }
  }
  return found;
}

/** Wait results that came back empty (a timed-out `wait`). */
function timeouts(req: RecordedRequest): number {
  return req.messages.filter(
    (m) => m.role === "tool" && /"status":\s*"timeout"/.test(m.content ?? ""),
  ).length;
}

/**
 * Scripts the storm. The root waits again until its model has seen all 30 bodies; a wait that
 * times out ends its turn with how many it got (the "timed out with 25 of 30").
 */
export function scriptMailStorm(
  fake: FakeModel,
  options: {
    waitSeconds: number;
    /** Steps answered again when asked again (a response lost with its lease). */
    reaskFirst?: boolean;
  },
): void {
  const first = options.reaskFirst ? Infinity : 1;
  const next = (req: RecordedRequest) => {
    const got = bodiesShown(req).size;
    if (got >= STORM_MAILS) return { text: ALL_RECEIVED };
    if (timeouts(req) > 0) return { text: `gave up with ${got} of ${STORM_MAILS}` };
    return { toolCalls: [{ name: "wait", arguments: { timeout: options.waitSeconds } }] };
  };
  fake.script([
    {
      agent: "root",
      match: isFirst,
      times: first,
      reply: {
        toolCalls: STORM_CHILDREN.map((name) => ({
          name: "fork",
          arguments: { name, prompt: `report ${name}`, context: "fresh" },
        })),
      },
    },
    {
      agent: "root",
      match: (req) => ["fork", "wait"].includes(lastToolName(req) ?? ""),
      times: Infinity,
      reply: next,
      label: "root: wait again or answer",
    },
    ...STORM_CHILDREN.flatMap((name) => [
      {
        agent: name,
        match: isFirst,
        times: first,
        reply: {
          toolCalls: Array.from({ length: MAILS_PER_CHILD }, (_, i) => ({
            name: "send",
            arguments: { to: "parent", message: body(name, i + 1) },
          })),
        },
      },
      // Under a takeover any response in flight may be lost with its lease and asked again.
      { agent: name, match: after("send"), times: first, reply: { text: `${name} done` } },
    ]),
  ]);
}

export interface StormRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json?: { tree_id: string; text: string };
  elapsedMs: number;
}

/**
 * The database's clock before a storm starts: its trees are those created since (by the same
 * clock, so no margin for skew that would also count a tree of the test before it).
 */
export async function stormStart(db: Db): Promise<Date> {
  const [row] = (await db.execute<{ now: string }>(sql`select now()::text as now`)).rows;
  return new Date(row!.now);
}

/**
 * Asserts that the storm ended well: `-p` exited 0 in time with the root's full answer, and every
 * invariant of the tree holds. Everything wrong is listed in one failure, with `context` (e.g.
 * what the proxy dropped) and the processes' stderr.
 */
export async function expectStormExactlyOnce(
  db: Db,
  fake: FakeModel,
  run: StormRun,
  options: {
    maxMs: number;
    context: string[];
    stderr?: string[];
    since: Date;
    modelCalls?: TreeExpectations["modelCalls"];
  },
): Promise<void> {
  const problems: string[] = [];
  if (run.code !== 0) problems.push(`-p exited ${run.code}`);
  if (run.json?.text !== ALL_RECEIVED)
    problems.push(`root answered ${JSON.stringify(run.json?.text)}`);
  if (run.elapsedMs > options.maxMs) problems.push(`-p took ${run.elapsedMs} ms`);
  const treeId = run.json?.tree_id ?? (await newestTree(db));
  // A lost reply to creating the tree must not leave a second, orphaned one.
  const roots = await db.execute<{ n: number }>(sql`
    select count(*)::int as n from agents
     where parent_id is null and created_at >= ${options.since.toISOString()}::timestamptz`);
  if (roots.rows[0]!.n !== 1) problems.push(`${roots.rows[0]!.n} trees created, expected 1`);
  problems.push(
    ...(await treeViolations(db, {
      treeId,
      mail: stormMail(),
      fake,
      stderr: [run.stderr, ...(options.stderr ?? [])],
      modelCalls: options.modelCalls,
    })),
  );
  const report = [
    ...problems,
    "--- context",
    ...options.context,
    `--- -p stderr\n${run.stderr}`,
    ...(options.stderr ?? []).map((text) => `--- other stderr\n${text}`),
  ];
  expect(problems, report.join("\n")).toEqual([]);
}

async function newestTree(db: Db): Promise<string> {
  const rows = await db.execute<{ id: string }>(
    sql`select id from agents where parent_id is null order by created_at desc limit 1`,
  );
  return rows.rows[0]!.id;
}
