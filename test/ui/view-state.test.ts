// The view state's pure updates: scrolling, the panel's selection and filter, search answers.
import { describe, expect, it } from "vitest";
import { flashText, initialView, updateView, type ViewEvent } from "../../src/ui/view-state.js";
import type { SearchHit } from "../../src/search/search.js";

const apply = (...events: ViewEvent[]) => events.reduce(updateView, initialView());

describe("updateView", () => {
  it("never scrolls below the bottom", () => {
    expect(apply({ type: "scroll", by: 5 }, { type: "scroll", by: -2 }).scroll).toBe(3);
    expect(apply({ type: "scroll", by: -5 }).scroll).toBe(0);
  });

  it("moves the panel's selection along the listed order, clamped at both ends", () => {
    const listed = apply(
      { type: "panel-open", selected: "b" },
      { type: "panel-listed", order: ["a", "b", "c"], selected: "b" },
    );
    expect(updateView(listed, { type: "panel-move", by: 1 }).panel?.selected).toBe("c");
    const top = updateView(updateView(listed, { type: "panel-move", by: -1 }), {
      type: "panel-move",
      by: -1,
    });
    expect(top.panel?.selected).toBe("a");
    expect(updateView(listed, { type: "panel-close" }).panel).toBeUndefined();
  });

  it("edits the panel's filter by whole characters; nothing without a panel", () => {
    const typed = apply(
      { type: "panel-open", selected: "a" },
      { type: "panel-type", text: "wé" },
      { type: "panel-type", text: "🦊" },
      { type: "panel-backspace" },
    );
    expect(typed.panel?.filter).toBe("wé");
    expect(updateView(typed, { type: "panel-clear" }).panel?.filter).toBe("");
    expect(apply({ type: "panel-type", text: "x" }).panel).toBeUndefined();
  });

  it("keeps only the newest query's answer", () => {
    const hit = { event_id: 1 } as SearchHit;
    const first = apply({ type: "search-open", query: "one" });
    const second = updateView(first, { type: "search-open", query: "two" });
    const stale = updateView(second, { type: "search-answer", seq: first.searchSeq, hits: [hit] });
    expect(stale.search?.hits).toBeUndefined();
    const fresh = updateView(second, { type: "search-answer", seq: second.searchSeq, hits: [] });
    expect(fresh.search).toMatchObject({ query: "two", hits: [] });
  });

  it("a jump closes the list and follows the bottom until the painter scrolls to the hit", () => {
    const jumped = apply(
      { type: "search-open", query: "x" },
      { type: "scroll", by: 9 },
      { type: "jump", agentId: "a", eventId: 7 },
    );
    expect(jumped).toMatchObject({
      search: undefined,
      scroll: 0,
      jump: { agentId: "a", eventId: 7 },
    });
    expect(updateView(jumped, { type: "jump-done" }).jump).toBeUndefined();
  });

  it("shows a flash until its time", () => {
    const flashed = apply({ type: "flash", text: "hi", until: 1000 });
    expect(flashText(flashed, 999)).toBe("hi");
    expect(flashText(flashed, 1000)).toBeUndefined();
  });
});
