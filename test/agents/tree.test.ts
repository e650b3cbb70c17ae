// The agent tree: creating roots, forking within the limits, changing state and reaping the dead.
import { describe, expect, it } from "vitest";
import { listEvents } from "../../src/agents/events.js";
import { DEFAULT_LIMITS, type Limits } from "../../src/agents/limits.js";
import { getAgent } from "../../src/agents/refs.js";
import {
  createTree,
  forkAgent,
  forkAgentIn,
  killAgent,
  listTree,
  reapDead,
  setState,
} from "../../src/agents/tree.js";
import { expectAgentError } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { blockedOrSettled } from "../support/locks.js";

const database = useTestDatabase();
const db = () => database().db;

describe("createTree", () => {
  it("makes an idle root that is its own tree, with no events", async () => {
    const root = await createTree(db(), { name: "boss" });
    expect(root).toMatchObject({ tree_id: root.id, parent_id: null, name: "boss", state: "idle" });
    expect(root.depth).toBe(0);
    expect(await listEvents(db(), root.id)).toEqual([]);
    expect((await createTree(db())).name).toBe("root");
  });

  it("starts a root with a prompt running, the prompt being its first user event", async () => {
    const root = await createTree(db(), { prompt: "plan the release" });
    expect(root.state).toBe("running");
    const events = await listEvents(db(), root.id);
    expect(events.map((e) => [e.kind, e.content])).toEqual([["user", "plan the release"]]);
  });
});

describe("forkAgent", () => {
  it("a child with a prompt is running; the parent records a fork event", async () => {
    const root = await createTree(db());
    const child = await forkAgent(db(), root.id, { name: "scout", prompt: "look around" });
    expect(child).toMatchObject({
      tree_id: root.id,
      parent_id: root.id,
      name: "scout",
      state: "running",
      depth: 1,
    });
    const childEvents = await listEvents(db(), child.id);
    expect(childEvents.map((e) => [e.kind, e.content])).toEqual([["user", "look around"]]);
    const parentEvents = await listEvents(db(), root.id);
    expect(parentEvents).toHaveLength(1);
    expect(parentEvents[0]).toMatchObject({ kind: "fork", data: { agent_id: child.id } });
  });

  it("a child without a prompt is idle", async () => {
    const root = await createTree(db());
    const child = await forkAgent(db(), root.id, { name: "spare" });
    expect(child.state).toBe("idle");
    expect(await listEvents(db(), child.id)).toEqual([]);
  });

  it("allows three levels below the root and refuses a fourth", async () => {
    const root = await createTree(db());
    let parent = root;
    for (const level of [1, 2, 3]) {
      parent = await forkAgent(db(), parent.id, { name: `level${level}` });
      expect(parent.depth).toBe(level);
    }
    const error = await expectAgentError(
      forkAgent(db(), parent.id, { name: "level4" }),
      "LIMIT_EXCEEDED",
    );
    expect(error.message).toMatch(/depth/);
    expect(await listTree(db(), root.id)).toHaveLength(4);
  });

  it("limits living children per agent; a dead child frees its place", async () => {
    const limits: Limits = { ...DEFAULT_LIMITS, maxChildren: 2 };
    const root = await createTree(db());
    const first = await forkAgent(db(), root.id, { name: "a" }, limits);
    await forkAgent(db(), root.id, { name: "b" }, limits);
    await expectAgentError(forkAgent(db(), root.id, { name: "c" }, limits), "LIMIT_EXCEEDED");
    // Grandchildren do not count against the root's children.
    await forkAgent(db(), first.id, { name: "a1" }, limits);
    await killAgent(db(), { targetId: first.id, byAgentId: null });
    await forkAgent(db(), root.id, { name: "c" }, limits);
  });

  it("limits living agents per tree", async () => {
    const limits: Limits = { ...DEFAULT_LIMITS, maxAgentsPerTree: 3 };
    const root = await createTree(db());
    const a = await forkAgent(db(), root.id, { name: "a" }, limits);
    const b = await forkAgent(db(), a.id, { name: "b" }, limits);
    await expectAgentError(forkAgent(db(), b.id, { name: "c" }, limits), "LIMIT_EXCEEDED");
    await expectAgentError(forkAgent(db(), root.id, { name: "c" }, limits), "LIMIT_EXCEEDED");
    // Another tree has its own count.
    const other = await createTree(db());
    await forkAgent(db(), other.id, { name: "x" }, limits);
    await killAgent(db(), { targetId: b.id, byAgentId: null });
    await forkAgent(db(), root.id, { name: "c" }, limits);
  });

  it("keeps names unique among living children, also when forks of one name race", async () => {
    const root = await createTree(db());
    const first = await forkAgent(db(), root.id, { name: "dup" });
    await expectAgentError(forkAgent(db(), root.id, { name: "dup" }), "INVALID_ARGS");
    // Another parent may use the name; a dead child's name is free again.
    await forkAgent(db(), first.id, { name: "dup" });
    await killAgent(db(), { targetId: first.id, byAgentId: null });
    // A fork of "dup" held open: a second fork of the name must wait for it and then refuse,
    // not count the children before the first commits and add a twin.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let forked!: () => void;
    const inside = new Promise<void>((resolve) => (forked = resolve));
    const held = db().transaction(async (tx) => {
      await forkAgentIn(tx, root.id, { name: "dup" });
      forked();
      await gate;
    });
    await inside;
    const second = forkAgent(db(), root.id, { name: "dup" });
    // Either the second fork finishes on its own (a twin), or it waits for the held one's lock.
    const seen = await blockedOrSettled(db(), second);
    release();
    expect(seen).toBe("blocked");
    await held;
    await expectAgentError(second, "INVALID_ARGS");
    const living = (await listTree(db(), root.id)).filter(
      (a) => a.name === "dup" && a.parent_id === root.id && a.state !== "dead",
    );
    expect(living).toHaveLength(1);
  });

  it("counts a fork of another parent that committed while it waited for the tree's root", async () => {
    const limits: Limits = { ...DEFAULT_LIMITS, maxAgentsPerTree: 3 };
    const root = await createTree(db());
    const a = await forkAgent(db(), root.id, { name: "a" }, limits);
    // A fork under `a` held open: the root's fork must wait for it (the root lock is per tree,
    // not per parent) and then count it: the tree is full.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let forked!: () => void;
    const inside = new Promise<void>((resolve) => (forked = resolve));
    const held = db().transaction(async (tx) => {
      await forkAgentIn(tx, a.id, { name: "a1" }, limits);
      forked();
      await gate;
    });
    await inside;
    const second = forkAgent(db(), root.id, { name: "b" }, limits);
    const seen = await blockedOrSettled(db(), second);
    release();
    expect(seen).toBe("blocked");
    await held;
    const error = await expectAgentError(second, "LIMIT_EXCEEDED");
    expect(error.message).toMatch(/3 living agents/);
    expect(await listTree(db(), root.id)).toHaveLength(3);
  });

  it("refuses a dead parent with AGENT_DEAD and an unknown one with UNKNOWN_AGENT", async () => {
    const root = await createTree(db());
    const child = await forkAgent(db(), root.id, { name: "doomed" });
    await killAgent(db(), { targetId: child.id, byAgentId: null });
    await expectAgentError(forkAgent(db(), child.id, { name: "orphan" }), "AGENT_DEAD");
    const unknown = "00000000-0000-4000-8000-000000000000";
    await expectAgentError(forkAgent(db(), unknown, { name: "orphan" }), "UNKNOWN_AGENT");
  });

  it("refuses bad names with INVALID_ARGS", async () => {
    const root = await createTree(db());
    const bad: unknown[] = ["", "   ", "two\nlines", "tab\there", "x".repeat(65), "parent", 42];
    for (const name of bad) {
      await expectAgentError(forkAgent(db(), root.id, { name: name as string }), "INVALID_ARGS");
    }
    expect(await listTree(db(), root.id)).toHaveLength(1);
    expect((await forkAgent(db(), root.id, { name: "  padded  " })).name).toBe("padded");
  });
});

describe("setState", () => {
  it("changes a living agent's state but never revives the dead", async () => {
    const root = await createTree(db());
    const child = await forkAgent(db(), root.id, { name: "w", prompt: "go" });
    expect(await setState(db(), child.id, "idle")).toBe(true);
    expect((await getAgent(db(), child.id))?.state).toBe("idle");
    await killAgent(db(), { targetId: child.id, byAgentId: null });
    expect(await setState(db(), child.id, "running")).toBe(false);
    expect((await getAgent(db(), child.id))?.state).toBe("dead");
  });
});

describe("reapDead", () => {
  it("hides dead agents from the tree listing once, keeping their rows", async () => {
    const root = await createTree(db());
    const a = await forkAgent(db(), root.id, { name: "a" });
    const a1 = await forkAgent(db(), a.id, { name: "a1" });
    const b = await forkAgent(db(), root.id, { name: "b" });
    expect(await reapDead(db(), root.id)).toEqual([]);

    await killAgent(db(), { targetId: a.id, byAgentId: null });
    expect((await reapDead(db(), root.id)).sort()).toEqual([a.id, a1.id].sort());
    expect(await reapDead(db(), root.id)).toEqual([]);

    expect((await listTree(db(), root.id)).map((r) => r.id)).toEqual([root.id, b.id]);
    const all = await listTree(db(), root.id, { includeReaped: true });
    expect(all.map((r) => r.id).sort()).toEqual([root.id, a.id, a1.id, b.id].sort());
    expect((await getAgent(db(), a1.id))?.reaped_at).not.toBeNull();
  });
});
