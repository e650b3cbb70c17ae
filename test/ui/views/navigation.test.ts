// Keyboard navigation over the agent tree (SPEC §4): parent, newest child, siblings wrapping;
// reaped agents skipped, dead ones visitable; where the view goes when its agent dies.
import { describe, expect, it } from "vitest";
import type { AgentRow } from "../../../src/agents/agents.sql.js";
import { navigate, navInfo, nearestLivingAncestor } from "../../../src/ui/views/index.js";
import { agent, NOW } from "./fixtures.js";

function family() {
  const root = agent({ name: "root", created_at: new Date(NOW - 1_000_000) });
  const at = (name: string, parent: AgentRow, age: number, fields: Partial<AgentRow> = {}) =>
    agent({
      name,
      parent_id: parent.id,
      tree_id: root.id,
      created_at: new Date(NOW - age),
      ...fields,
    });
  const a = at("a", root, 900_000);
  const b = at("b", root, 800_000, { state: "dead" });
  const c = at("c", root, 700_000, { state: "dead", reaped_at: new Date(NOW) });
  const d = at("d", root, 600_000);
  const a1 = at("a1", a, 500_000);
  const a2 = at("a2", a, 400_000, { state: "running" });
  const a2x = at("a2x", a2, 300_000, { state: "dead" });
  // Rows arrive in any order; navigation orders by creation.
  return { root, a, b, c, d, a1, a2, a2x, all: [d, a2x, c, root, a2, b, a1, a] };
}

describe("navigate", () => {
  const f = family();
  const go = (from: AgentRow, dir: "parent" | "child" | "prev" | "next") =>
    navigate(f.all, from.id, dir);

  it("goes to the parent, and nowhere from the root", () => {
    expect(go(f.a1, "parent")).toBe(f.a.id);
    expect(go(f.a, "parent")).toBe(f.root.id);
    expect(go(f.root, "parent")).toBeUndefined();
  });

  it("goes to the newest visitable child", () => {
    expect(go(f.root, "child")).toBe(f.d.id);
    expect(go(f.a, "child")).toBe(f.a2.id);
    expect(go(f.a1, "child")).toBeUndefined();
  });

  it("walks siblings oldest to newest, wrapping, skipping reaped and visiting dead ones", () => {
    expect(go(f.a, "next")).toBe(f.b.id); // b is dead but not reaped
    expect(go(f.b, "next")).toBe(f.d.id); // c is reaped
    expect(go(f.d, "next")).toBe(f.a.id); // wraps
    expect(go(f.a, "prev")).toBe(f.d.id); // wraps backwards
    expect(go(f.d, "prev")).toBe(f.b.id);
    expect(go(f.root, "next")).toBeUndefined();
    expect(go(f.a2x, "next")).toBeUndefined(); // an only child
  });

  it("answers nothing for an unknown agent", () => {
    expect(navigate(f.all, "nope", "parent")).toBeUndefined();
    expect(navInfo(f.all, "nope")).toBeUndefined();
  });
});

describe("navInfo", () => {
  it("describes the neighbourhood for the separator", () => {
    const f = family();
    const info = navInfo(f.all, f.a.id)!;
    expect(info.current.id).toBe(f.a.id);
    expect(info.parent?.id).toBe(f.root.id);
    expect(info.prev?.id).toBe(f.d.id);
    expect(info.next?.id).toBe(f.b.id);
    expect(info.children).toBe(2);
    expect(navInfo(f.all, f.root.id)!.children).toBe(3); // a, b, d: c is reaped
  });
});

describe("nearestLivingAncestor", () => {
  it("is the agent itself while it lives, else the closest living, unreaped ancestor", () => {
    const f = family();
    expect(nearestLivingAncestor(f.all, f.a2.id)).toBe(f.a2.id);
    expect(nearestLivingAncestor(f.all, f.a2x.id)).toBe(f.a2.id);
    expect(nearestLivingAncestor(f.all, f.b.id)).toBe(f.root.id);
    const deadA2 = f.all.map((x) => (x.id === f.a2.id ? { ...x, state: "dead" as const } : x));
    expect(nearestLivingAncestor(deadA2, f.a2x.id)).toBe(f.a.id);
    expect(nearestLivingAncestor(f.all, "nope")).toBeUndefined();
  });
});
