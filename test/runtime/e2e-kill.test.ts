// End to end through `bin/warren -p`: kill cascades down a nested subtree and aborts in-flight
// model calls; agents may kill only their own descendants, and never the root.
import { describe, expect, it } from "vitest";
import {
  agentNamed,
  eventsOf,
  forkedIds,
  kindsOf,
  lastToolResults,
  requestsOf,
  startAbortProbe,
  treeAgents,
  useE2E,
  after,
  isFirst,
} from "./e2e-support.js";

const e2e = useE2E();

describe("kill", () => {
  it("cascades from the target to its descendants and aborts their model calls", async () => {
    const fake = e2e.fake();
    const probe = await startAbortProbe(fake.baseURL);
    let abortedBeforeRootAnswered: string[] = [];
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "A", prompt: "manage B", context: "fresh" } },
          ],
        },
      },
      { agent: "root", match: after("fork"), reply: { toolCalls: [wait(30)] } },
      {
        agent: "root",
        match: after("wait"),
        reply: (req) => ({
          toolCalls: [{ name: "kill", arguments: { agent_id: forkedIds(req).A } }],
        }),
      },
      {
        agent: "root",
        match: after("kill"),
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 0, from_agents: ["A", "B"] } }],
        },
      },
      {
        agent: "root",
        match: after("wait"),
        // The kill's abort reaches B's worker on its own path (a NOTIFY); give it a few seconds
        // to cut B's call off while the run goes on.
        reply: async () => {
          for (let i = 0; i < 100 && !probe.aborted.includes("B"); i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          abortedBeforeRootAnswered = [...probe.aborted];
          return { text: "subtree gone" };
        },
      },
      {
        agent: "A",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "B", prompt: "work forever", context: "inherit" } },
          ],
        },
      },
      // Once B's model call is in flight (its turn first takes a checkpoint), tell the root B
      // exists, then block on B: A is `waiting` when it is killed.
      {
        agent: "A",
        match: after("fork"),
        reply: async () => {
          for (let i = 0; i < 200 && requestsOf(fake, "B").length === 0; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return {
            toolCalls: [
              { name: "send", arguments: { to: "parent", message: "B is running" } },
              { name: "wait", arguments: { timeout: 600, from_agents: ["B"] } },
            ],
          };
        },
      },
      { agent: "B", reply: { hang: true } },
    ]);

    const run = await e2e
      .prompt("build a chain and cut it", { timeout: 30, modelUrl: probe.baseURL })
      .finally(() => probe.close());
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("subtree gone");

    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const a = await agentNamed(db, treeId, "A");
    const b = await agentNamed(db, treeId, "B");
    expect(b.parent_id).toBe(a.id);

    const root = requestsOf(fake, "root");
    expect(lastToolResults(root[2]!)[0]!.value).toEqual({
      from: a.id,
      from_name: "A",
      message: "B is running",
    });
    expect(lastToolResults(root[3]!)[0]!.value).toEqual({ killed: [a.id, b.id] });
    expect(lastToolResults(root[4]!)[0]!.value).toEqual({
      results: [
        { agent_id: a.id, name: "A", status: "dead" },
        { agent_id: b.id, name: "B", status: "dead" },
      ],
    });

    // B's request is A's request that forked it, byte for byte, then who B is and its task.
    const [bRequest] = requestsOf(fake, "B");
    expect(requestsOf(fake, "B")).toHaveLength(1);
    const [aFirst] = requestsOf(fake, "A");
    expect(bRequest!.messages.slice(0, -1)).toEqual(aFirst!.messages);
    expect(bRequest!.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", expect.stringContaining(`Your parent: root (${treeId})`)],
      ["user", "Your task:\nmanage B"],
      [
        "user",
        expect.stringMatching(
          new RegExp(
            `^The conversation above is your parent's[^]*Your parent: A \\(${a.id}\\)[^]*Your task:\nwork forever$`,
          ),
        ),
      ],
    ]);

    for (const victim of [a, b]) {
      expect(victim.state).toBe("dead");
      expect(victim.ended_at).not.toBeNull();
    }
    const aEvents = await eventsOf(db, a.id);
    const bEvents = await eventsOf(db, b.id);
    expect(aEvents.at(-1)).toMatchObject({ kind: "killed", data: { by: treeId, target: a.id } });
    expect(aEvents.at(-1)!.content).toBe(`killed by root ${treeId.slice(0, 8)}`);
    expect(bEvents.at(-1)).toMatchObject({ kind: "killed", data: { by: treeId, target: a.id } });
    expect(bEvents.at(-1)!.content).toContain("killed with ancestor A");
    // B's hung model call was cut off by the kill (while the run went on), not answered and not
    // reported as a model error.
    expect(abortedBeforeRootAnswered).toEqual(["B"]);
    expect(bEvents.map((e) => e.kind)).toEqual(["user", "killed"]);
    expect(aEvents.some((e) => e.kind === "error")).toBe(false);
    expect((await agentNamed(db, treeId, "root")).state).toBe("idle");
  });

  it("refuses to kill a parent, the root, a sibling or oneself (NOT_ALLOWED)", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: (req) => ({
          toolCalls: [
            { name: "fork", arguments: { name: "A", prompt: "make two", context: "fresh" } },
            // The root's id is in its own system prompt.
            {
              name: "kill",
              arguments: { agent_id: /^Your id: (.+)$/m.exec(req.systemPrompt!)![1]! },
            },
          ],
        }),
      },
      { agent: "root", match: after("kill"), reply: { text: "tried" } },
      {
        agent: "A",
        match: isFirst,
        reply: {
          toolCalls: ["C", "D"].map((name) => ({
            name: "fork",
            arguments: { name, prompt: `be ${name}`, context: "fresh" },
          })),
        },
      },
      { agent: "A", match: after("fork"), reply: { text: "made C and D" } },
      {
        agent: "C",
        match: isFirst,
        reply: (req) => ({
          toolCalls: [
            { name: "kill", arguments: { agent_id: "parent" } },
            { name: "kill", arguments: { agent_id: "root" } },
            { name: "kill", arguments: { agent_id: "D" } },
            {
              name: "kill",
              arguments: { agent_id: /^Your id: (.+)$/m.exec(req.systemPrompt!)![1]! },
            },
          ],
        }),
      },
      { agent: "C", match: after("kill"), reply: { text: "nobody died" } },
      { agent: "D", reply: { text: "D here" } },
      // A child's final text is its result, mailed to its parent: root and A read theirs.
      { agent: "root", reply: { text: "noted" }, times: Infinity },
      { agent: "A", reply: { text: "noted" }, times: Infinity },
    ]);

    const run = await e2e.prompt("try to kill things", { timeout: 30 });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const rootResults = lastToolResults(requestsOf(fake, "root")[1]!);
    expect(rootResults.map((r) => r.name)).toEqual(["fork", "kill"]);
    expect(rootResults[1]!.value).toEqual({
      error: { code: "NOT_ALLOWED", message: expect.stringContaining("root") },
    });

    const cResults = lastToolResults(requestsOf(fake, "C")[1]!);
    expect(cResults.map((r) => (r.value as { error: { code: string } }).error.code)).toEqual([
      "NOT_ALLOWED",
      "NOT_ALLOWED",
      "NOT_ALLOWED",
      "NOT_ALLOWED",
    ]);
    const messages = cResults.map((r) => (r.value as { error: { message: string } }).error.message);
    expect(messages[0]).toMatch(/only kill your own descendants/);
    expect(messages[1]).toMatch(/root agent cannot be killed/);
    expect(messages[2]).toMatch(/only kill your own descendants/);
    expect(messages[3]).toMatch(/cannot kill itself/);

    const db = e2e.db();
    const tree = await treeAgents(db, run.json!.tree_id);
    expect(tree).toHaveLength(4);
    expect(tree.every((agent) => agent.state === "idle")).toBe(true);
    for (const agent of tree) expect(await kindsOf(db, agent.id)).not.toContain("killed");
  });
});

function wait(timeout: number) {
  return { name: "wait", arguments: { timeout } };
}
