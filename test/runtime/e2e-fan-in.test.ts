// End to end through `bin/warren -p`: fan-in over children forked in one response, complete and
// partial (a timeout leaves a running child reported as running).
import { describe, expect, it } from "vitest";
import {
  agentNamed,
  eventsOf,
  forkedIds,
  kindsOf,
  lastToolResults,
  mailOf,
  requestsOf,
  treeAgents,
  useE2E,
  after,
  isFirst,
} from "./e2e-support.js";

const e2e = useE2E();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("fan-in", () => {
  it("collects one message from each of three children forked in one response", async () => {
    const fake = e2e.fake();
    const names = ["alpha", "beta", "gamma"];
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: names.map((name) => ({
            name: "fork",
            arguments: { name, prompt: `do part ${name}` },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        // The children's ids, read back from the fork results the model was sent.
        reply: (req) => {
          const ids = forkedIds(req);
          return {
            toolCalls: [
              { name: "wait", arguments: { timeout: 30, from_agents: names.map((n) => ids[n]) } },
            ],
          };
        },
      },
      { agent: "root", match: after("wait"), reply: { text: "all three reported" } },
      ...names.flatMap((name) => [
        {
          agent: name,
          match: isFirst,
          reply: {
            toolCalls: [{ name: "send", arguments: { to: "parent", message: `result ${name}` } }],
          },
        },
        { agent: name, match: after("send"), reply: { text: `${name} done` } },
      ]),
    ]);

    const run = await e2e.prompt("split the work three ways");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("all three reported");

    const [first, second, third] = requestsOf(fake, "root");
    expect(requestsOf(fake, "root")).toHaveLength(3);
    expect(first!.tools).toEqual([...first!.tools].sort());
    const forks = lastToolResults(second!);
    expect(forks.map((r) => r.name)).toEqual(["fork", "fork", "fork"]);
    forks.forEach((result, i) => {
      expect(Object.keys(result.value as object).sort()).toEqual(["agent_id", "name"]);
      expect(result.value).toMatchObject({ name: names[i], agent_id: expect.stringMatching(UUID) });
    });

    const ids = forkedIds(second!);
    const waited = lastToolResults(third!);
    expect(waited).toHaveLength(1);
    expect(waited[0]!.value).toEqual({
      results: names.map((name) => ({
        agent_id: ids[name],
        name,
        status: "received",
        message: `result ${name}`,
      })),
    });

    // The children inherited the root's conversation up to (not including) the forking response:
    // its request itself, byte for byte, then who each child is now and its task (SPEC §7).
    const alphaFirst = requestsOf(fake, "alpha")[0]!;
    expect(alphaFirst.messages.slice(0, -1)).toEqual(first!.messages);
    expect(alphaFirst.body.tools).toEqual(first!.body.tools);
    const told = alphaFirst.lastMessage!;
    expect(told.role).toBe("user");
    expect(told.content).toMatch(/^The conversation above is your parent's, not yours:/);
    expect(told.content).toContain(`Your name: alpha\nYour id: ${ids.alpha}\n`);
    expect(told.content).toContain(`Your parent: root (${run.json!.tree_id})`);
    expect(told.content).toMatch(/Your task:\ndo part alpha$/);

    const db = e2e.db();
    const tree = await treeAgents(db, run.json!.tree_id);
    // Forked concurrently: creation order among the children is not fixed.
    expect(tree.map((a) => [a.name, a.state]).sort()).toEqual([
      ["alpha", "idle"],
      ["beta", "idle"],
      ["gamma", "idle"],
      ["root", "idle"],
    ]);
    const letters = await mailOf(db, run.json!.tree_id);
    expect(letters).toHaveLength(3);
    const waitEvent = (await eventsOf(db, run.json!.tree_id)).find(
      (e) => e.kind === "tool_result" && e.data?.name === "wait",
    )!;
    for (const letter of letters) {
      expect(letter.to_id).toBe(run.json!.tree_id);
      expect(letter.consumed_by_event).toBe(waitEvent.id);
    }
    // The three forks ran concurrently, so only the multiset of the root's events is fixed.
    const kinds = await kindsOf(db, run.json!.tree_id);
    expect(kinds.filter((k) => k === "fork")).toHaveLength(3);
    expect(kinds.filter((k) => k === "tool_result")).toHaveLength(4);
    expect(kinds.at(-1)).toBe("assistant");
  });

  it("returns the partial state at the timeout: received, idle and running", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: ["sender", "quiet", "slow"].map((name) => ({
            name: "fork",
            arguments: { name, prompt: `task for ${name}`, context: "fresh" },
          })),
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: {
          toolCalls: [
            { name: "wait", arguments: { timeout: 2, from_agents: ["sender", "quiet", "slow"] } },
          ],
        },
      },
      // The slow child is still running: kill it rather than leave it to --timeout.
      {
        agent: "root",
        match: after("wait"),
        reply: { toolCalls: [{ name: "kill", arguments: { agent_id: "slow" } }] },
      },
      { agent: "root", match: after("kill"), reply: { text: "two of three" } },
      {
        agent: "sender",
        match: isFirst,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "here" } }] },
      },
      { agent: "sender", match: after("send"), reply: { text: "sent" } },
      { agent: "quiet", reply: { text: "nothing to report" } },
      { agent: "slow", reply: { hang: true } },
    ]);

    const run = await e2e.prompt("fan out and do not wait long", { timeout: 30 });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("two of three");

    const db = e2e.db();
    const treeId = run.json!.tree_id;
    const [sender, quiet, slow] = await Promise.all(
      ["sender", "quiet", "slow"].map((n) => agentNamed(db, treeId, n)),
    );
    const root = requestsOf(fake, "root");
    expect(lastToolResults(root[2]!)[0]!.value).toEqual({
      results: [
        { agent_id: sender!.id, name: "sender", status: "received", message: "here" },
        // Its answer is mailed as its final one (issue 42): a turn with text is never `idle`.
        {
          agent_id: quiet!.id,
          name: "quiet",
          status: "received",
          message: "nothing to report",
          final: true,
        },
        { agent_id: slow!.id, name: "slow", status: "running" },
      ],
    });
    expect(lastToolResults(root[3]!)[0]!.value).toEqual({ killed: [slow!.id] });

    expect([sender!.state, quiet!.state, slow!.state]).toEqual(["idle", "idle", "dead"]);
    // The hung stream was aborted by the kill: no answer, no error, just the kill.
    expect(await kindsOf(db, slow!.id)).toEqual(["user", "killed"]);
  });
});
