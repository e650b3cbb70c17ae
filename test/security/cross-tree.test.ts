// No one where they don't belong (issue 7 §8, SPEC §2-§3): an agent of tree A cannot send to,
// wait on or kill an agent of tree B — by full id, id prefix or name — and kills only its own
// descendants; the command line with --tree A does not reach into tree B either. Real bin/warren,
// fake model; tree B's rows must come out untouched, and `warren -p` leaves another tree's
// pending work alone.
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import type { RecordedRequest, ScriptedToolCall } from "../support/fake-model.js";
import {
  after,
  isFirst,
  lastToolResults,
  requestsOf,
  treeAgents,
  useE2E,
} from "../runtime/e2e-support.js";

const e2e = useE2E();
let other: { root: AgentRow; victim: AgentRow; bystander: AgentRow };
let eventsOfB = 0;

beforeAll(async () => {
  const db = e2e.db();
  // Tree B: idle agents nobody runs (`warren -p` runs its own tree only).
  const root = await createTree(db, { name: "b-root" });
  const victim = await forkAgent(db, root.id, { name: "victim", context: "fresh" });
  const bystander = await forkAgent(db, root.id, { name: "bystander", context: "fresh" });
  other = { root, victim, bystander };
  eventsOfB = await countEventsOfB();
});

async function countEventsOfB(): Promise<number> {
  const rows = await e2e.db().execute<{ n: number }>(sql`
    select count(*)::int as n from events
     where agent_id in (select id from agents where tree_id = ${other.root.id})`);
  return rows.rows[0]!.n;
}

/** Every way of naming an agent of tree B. */
function refsToB(): { how: string; ref: string }[] {
  return [
    { how: "full id", ref: other.victim.id },
    { how: "id prefix", ref: other.victim.id.slice(0, 8) },
    { how: "upper-case id", ref: other.victim.id.toUpperCase() },
    { how: "name", ref: "victim" },
    { how: "root's full id", ref: other.root.id },
    { how: "root's name", ref: "b-root" },
  ];
}

async function treeBUntouched(): Promise<void> {
  const db = e2e.db();
  const rows = await treeAgents(db, other.root.id);
  expect(rows.map((a) => [a.name, a.state])).toEqual([
    ["b-root", "idle"],
    ["victim", "idle"],
    ["bystander", "idle"],
  ]);
  const letters = await db.execute<{ n: number }>(sql`
    select count(*)::int as n from mail
     where tree_id = ${other.root.id} or to_id in (select id from agents where tree_id = ${other.root.id})`);
  expect(letters.rows[0]!.n).toBe(0);
  expect(await countEventsOfB()).toBe(eventsOfB);
}

const codeOf = (value: unknown) => (value as { error?: { code?: string } }).error?.code;

describe("references across trees, through the tools", () => {
  it("send, wait and kill by id, prefix or name never reach another tree", async () => {
    const fake = e2e.fake();
    const refs = refsToB();
    const calls: ScriptedToolCall[] = refs.flatMap(({ ref }) => [
      { name: "send", arguments: { to: ref, message: "hello from A" } },
      { name: "wait", arguments: { timeout: 0, from_agents: [ref] } },
      { name: "kill", arguments: { agent_id: ref } },
    ]);
    fake.script([
      { agent: "root", match: isFirst, reply: { toolCalls: calls } },
      { agent: "root", match: after("kill"), reply: { text: "tried" } },
    ]);
    const run = await e2e.prompt("reach into the other tree");
    expect(run.code, run.stderr).toBe(0);
    const results = lastToolResults(requestsOf(fake, "root")[1]!);
    expect(results).toHaveLength(calls.length);
    const shown = results.map(
      (r, i) => `${r.name} ${refs[Math.floor(i / 3)]!.how}: ${codeOf(r.value)}`,
    );
    expect(shown).toEqual(
      refs.flatMap(({ how }) => [
        `send ${how}: UNKNOWN_AGENT`,
        `wait ${how}: UNKNOWN_AGENT`,
        `kill ${how}: UNKNOWN_AGENT`,
      ]),
    );
    await treeBUntouched();
  });

  it("an agent kills only its own descendants: not its parent, a sibling or the root", async () => {
    const fake = e2e.fake();
    const kid = (req: RecordedRequest) => req.systemPrompt?.includes("Your name: kid") ?? false;
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "kid", prompt: "try to kill", context: "fresh" } },
            { name: "fork", arguments: { name: "sib", prompt: "report", context: "fresh" } },
          ],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: ["kid", "sib"] } }],
        },
      },
      {
        agent: "root",
        match: after("wait"),
        reply: { toolCalls: [{ name: "kill", arguments: { agent_id: "kid" } }] },
      },
      { agent: "root", match: after("kill"), reply: { text: "done" } },
      {
        agent: "kid",
        match: isFirst,
        // Forks of one response run at once: kid may ask before sib exists. Wait for sib (its
        // first request), so "sib" names a sibling rather than nobody.
        reply: async (req) => {
          for (let i = 0; i < 100 && requestsOf(fake, "sib").length === 0; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return killAttempts(req);
        },
      },
      {
        match: (req) => kid(req) && after("kill")(req),
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "kid done" } }] },
      },
      { agent: "kid", match: after("send"), reply: { text: "kid done" } },
      {
        agent: "sib",
        match: isFirst,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "sib done" } }] },
      },
      { agent: "sib", match: after("send"), reply: { text: "sib done" } },
    ]);
    const run = await e2e.prompt("kids fighting");
    expect(run.code, run.stderr).toBe(0);
    const tried = lastToolResults(requestsOf(fake, "kid")[1]!).map((r) => codeOf(r.value));
    // Parent, sibling and root by id: NOT_ALLOWED; itself: not a descendant either; B: unknown.
    expect(tried).toEqual([
      "NOT_ALLOWED",
      "NOT_ALLOWED",
      "NOT_ALLOWED",
      "NOT_ALLOWED",
      "UNKNOWN_AGENT",
    ]);
    const killedByRoot = lastToolResults(requestsOf(fake, "root").at(-1)!)[0]!.value as {
      killed: string[];
    };
    expect(killedByRoot.killed).toHaveLength(1);
    const tree = await treeAgents(e2e.db(), run.json!.tree_id);
    expect(tree.map((a) => [a.name, a.state]).sort()).toEqual([
      ["kid", "dead"],
      ["root", "idle"],
      ["sib", "idle"],
    ]);
    await treeBUntouched();
  });
});

describe("references across trees, through the command line", () => {
  it("with --tree A, send and kill do not resolve an agent of tree B", async () => {
    const db = e2e.db();
    const mine = await createTree(db, { name: "a-root" });
    await forkAgent(db, mine.id, { name: "mine", context: "fresh" });
    // Full id, prefix and name (the tool test above covers the other spellings), all at once.
    const refs = refsToB().filter((r) => ["full id", "id prefix", "name"].includes(r.how));
    const runs = await Promise.all([
      ...refs.map(({ ref }) => e2e.warren(["send", "--tree", mine.id, ref, "hello"])),
      ...refs.map(({ ref }) => e2e.warren(["kill", "--tree", mine.id, ref])),
      // Without --tree a name is looked up in the most recent tree (A here), never in B.
      e2e.warren(["kill", "victim"]),
    ]);
    const hows = [
      ...refs.map((r) => `send ${r.how}`),
      ...refs.map((r) => `kill ${r.how}`),
      "kill name, no --tree",
    ];
    expect(runs.map((run, i) => [hows[i], run.code])).toEqual(hows.map((how) => [how, 1]));
    for (const run of runs) {
      // One clear line each, never SQL.
      expect(run.stderr).toMatch(/^warren: .*(no agent|not|unknown)/i);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
    await treeBUntouched();
  });
});

describe("work across trees", () => {
  it("warren -p runs its own tree only: another tree's pending work is left alone", async () => {
    const db = e2e.db();
    // Tree C: a root with a message waiting for whoever runs its tree.
    const pending = await createTree(db, { name: "c-root", prompt: "someone else's work" });
    e2e.fake().script({ agent: "root", reply: { text: "mine is done" } });
    const run = await e2e.prompt("only my own work");
    expect(run.code, run.stderr).toBe(0);
    expect(run.json?.text).toBe("mine is done");
    expect(requestsOf(e2e.fake(), "c-root")).toEqual([]);
    const c = await treeAgents(db, pending.id);
    expect(c.map((a) => [a.name, a.lease_owner, a.turns])).toEqual([["c-root", null, 0]]);
    const answered = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events where agent_id = ${pending.id} and kind <> 'user'`);
    expect(answered.rows[0]!.n).toBe(0);
  });
});

/** kid's first response: kill its parent, its sibling, the root by id, itself and another tree's agent. */
function killAttempts(req: RecordedRequest) {
  return {
    toolCalls: [
      { name: "kill", arguments: { agent_id: "parent" } },
      { name: "kill", arguments: { agent_id: "sib" } },
      {
        name: "kill",
        arguments: {
          agent_id: /Your parent: root \(([0-9a-f-]+)\)/.exec(req.systemPrompt ?? "")![1]!,
        },
      },
      { name: "kill", arguments: { agent_id: "kid" } },
      { name: "kill", arguments: { agent_id: other.bystander.id } },
    ],
  };
}
