// The live feed end to end: a runtime (worker threads) runs the agents, and a second pool+bus —
// another process, as far as Postgres can tell — follows the tree through openFeed: agents,
// events, model text streaming in before the response is complete, activity and fan-in status.
import { describe, expect, it } from "vitest";
import { createTree, forkAgent, killAgent } from "../../src/agents/tree.js";
import { treeChannel } from "../../src/bus/channels.js";
import type { FeedUpdate, StreamSnapshot } from "../../src/feed/types.js";
import { STREAM_INTERVAL_MS } from "../../src/feed/publish.js";
import { sendInput } from "../../src/mail/input.js";
import { listenBackends, recordNotifications } from "../support/agents.js";
import { isAgent, isEvent, openObserver, useRuntime } from "./rig.js";

const rig = useRuntime();

const streamsOf = (updates: FeedUpdate[], agentId: string): StreamSnapshot[] =>
  updates.flatMap((u) => (u.type === "stream" && u.stream.agentId === agentId ? [u.stream] : []));

describe("openFeed", () => {
  it("shows another process's turn live: the stream arrives before the answer, coalesced", async () => {
    const { db, url } = rig.database();
    const answer = "The quick brown fox jumps over the lazy dog, then naps in the afternoon sun.";
    const thinking = "The person asks about a fox; describe it.";
    const chunkSize = 2;
    rig.fake().script({
      agent: "streamer",
      // 38 deltas, one every 10 ms: about 0.4 s of streaming.
      reply: {
        text: answer,
        reasoning: thinking,
        chunkSize,
        chunkDelayMs: 10,
        usage: { input: 11, output: 22 },
      },
    });
    const root = await createTree(db, { name: "streamer" });
    const observer = await openObserver(url, root.id);
    const raw = await recordNotifications(observer.bus, [treeChannel(root.id)]);
    try {
      observer.feed.watchStreams([root.id]);
      await sendInput(observer.db, root.id, "tell me about the fox");

      await observer.until(
        "the root running",
        isAgent(root.id, (a) => a.state === "running"),
      );
      await observer.until(
        "the user event",
        isEvent(root.id, "user", (c) => c.includes("fox")),
      );
      await observer.until(
        "thinking",
        isAgent(root.id, (a) => a.activity === "thinking"),
      );
      const final = await observer.until("the assistant event", isEvent(root.id, "assistant"));
      expect(final.event.content).toBe(answer);
      await observer.until(
        "the root idle, activity cleared and tokens counted",
        isAgent(
          root.id,
          (a) => a.state === "idle" && a.activity === null && a.output_tokens === 22,
        ),
      );
      await observer.until(
        "the stream ended",
        (u) => u.type === "stream" && u.stream.agentId === root.id && !u.stream.live,
      );

      // Partial text was delivered while the response was still streaming, before its event.
      const assistantAt = observer.updates.indexOf(final);
      const before = streamsOf(observer.updates.slice(0, assistantAt), root.id);
      const partial = before.filter(
        (s) => s.live && s.text.length > 0 && s.text.length < answer.length,
      );
      expect(partial.length).toBeGreaterThanOrEqual(3);
      for (const s of partial) expect(answer.startsWith(s.text)).toBe(true);
      // Thinking streams too (it comes first), and is kept beside the text.
      expect(partial.at(-1)!.reasoning).toBe(thinking);
      // Text only grows.
      const lengths = before.map((s) => s.text.length);
      expect([...lengths].sort((a, b) => a - b)).toEqual(lengths);

      // Row writes coalesced: at most one per STREAM_INTERVAL_MS (50 ms). Deltas come every ~10 ms,
      // so that is about one write per five deltas; one per delta would be 38. The text itself
      // went out in hints (`d:` alone, `w:` with a row write), never more than one per delta.
      const deltas = Math.ceil(answer.length / chunkSize) + Math.ceil(thinking.length / chunkSize);
      const writes = raw.received.filter((n) => n.payload.startsWith(`w:${root.id}:`));
      const hints = raw.received.filter((n) => n.payload.startsWith(`d:${root.id}:`));
      expect(STREAM_INTERVAL_MS).toBe(50);
      expect(writes.length).toBeLessThanOrEqual(Math.ceil(answer.length / chunkSize) / 2);
      expect(writes.length + hints.length).toBeLessThanOrEqual(deltas);
      expect(hints.length).toBeGreaterThan(0);
      rig.fake().assertAllUsed();
    } finally {
      raw.stop();
      await observer.close();
    }
  });

  it("follows a fan-in: activity and wait_status of the parent change as children finish", async () => {
    const { db, url } = rig.database();
    const fake = rig.fake();
    fake.script([
      {
        agent: "boss",
        match: (req) => req.lastMessage?.role === "user",
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "quick", prompt: "go", context: "fresh" } },
            { name: "fork", arguments: { name: "slow", prompt: "go", context: "fresh" } },
            { name: "wait", arguments: { timeout: 30, from_agents: ["quick", "slow"] } },
          ],
        },
      },
      {
        agent: "quick",
        match: (req) => req.lastMessage?.role === "user",
        reply: {
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "quick done" } }],
        },
      },
      { agent: "quick", match: (req) => req.lastMessage?.role === "tool", reply: { text: "ok" } },
      {
        agent: "slow",
        match: (req) => req.lastMessage?.role === "user",
        reply: {
          delayMs: 1500,
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "slow done" } }],
        },
      },
      { agent: "slow", match: (req) => req.lastMessage?.role === "tool", reply: { text: "ok" } },
      { agent: "boss", match: (req) => req.lastMessage?.role === "tool", reply: { text: "both" } },
    ]);
    const boss = await createTree(db, { name: "boss" });
    const observer = await openObserver(url, boss.id);
    try {
      await sendInput(observer.db, boss.id, "fan out");
      await observer.until(
        "the boss waiting for 2 agents",
        isAgent(boss.id, (a) => a.state === "waiting" && a.activity === "waiting for 2 agents"),
      );
      const partial = await observer.until(
        "quick received while slow runs",
        isAgent(boss.id, (a) => {
          const status = Object.fromEntries((a.wait_status ?? []).map((e) => [e.name, e.status]));
          return status.quick === "received" && status.slow === "running";
        }),
      );
      // Names and states only: message bodies never go into wait_status.
      expect(JSON.stringify(partial.agent.wait_status)).not.toContain("quick done");
      const result = await observer.until(
        "the fan-in result",
        isEvent(boss.id, "tool_result", (c) => c.includes("slow done")),
      );
      expect(
        JSON.parse(result.event.content).results.map((r: { status: string }) => r.status),
      ).toEqual(["received", "received"]);
      await observer.until(
        "the boss idle with its wait status cleared",
        isAgent(
          boss.id,
          (a) => a.state === "idle" && a.wait_status === null && a.activity === null,
        ),
      );
      // Children appeared through the feed too (created by another process).
      const names = observer.updates.flatMap((u) =>
        u.type === "agent" && u.agent.parent_id === boss.id ? [u.agent.name] : [],
      );
      expect(new Set(names)).toEqual(new Set(["quick", "slow"]));
      fake.assertAllUsed();
    } finally {
      await observer.close();
    }
  });

  it("uses one channel however many agents: 50 children change, the LISTEN count stays", async () => {
    const { db, url } = rig.database();
    const root = await createTree(db, { name: "many" });
    const observer = await openObserver(url, root.id);
    try {
      const listeners = (await listenBackends(db)).length;
      const children = [];
      for (let i = 0; i < 50; i++)
        children.push(
          await forkAgent(
            db,
            root.id,
            { name: `c${i}` },
            { ...rig.config().limits, maxChildren: 64 },
          ),
        );
      observer.feed.watchStreams(children.map((c) => c.id));
      for (const child of children) await observer.until(`child ${child.name}`, isAgent(child.id));
      await Promise.all(children.map((c) => killAgent(db, { targetId: c.id, byAgentId: null })));
      for (const child of children) {
        await observer.until(
          `${child.name} dead`,
          isAgent(child.id, (a) => a.state === "dead"),
        );
        await observer.until(`${child.name}'s killed event`, isEvent(child.id, "killed"));
      }
      expect(observer.bus.channelCount()).toBe(1);
      expect((await listenBackends(db)).length).toBe(listeners);
      // Batched: far fewer deliveries than the ~150 rows that changed.
      expect(observer.batches).toBeLessThan(100);
    } finally {
      await observer.close();
    }
  });
});
