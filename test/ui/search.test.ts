// The TUI search's pure parts: /search parsing, the result list's keys, and the scroll that puts a
// jumped-to event in view (counted as the scrollback lays entries out).
import { describe, expect, it } from "vitest";
import type { SearchHit } from "../../src/search/search.js";
import { parseCommand } from "../../src/ui/commands.js";
import { openSearch, scrollToEvent, searchKey, linesBelowEvent } from "../../src/ui/search.js";
import type { KeyEvent, KeyName } from "../../src/ui/keys.js";
import { createScrollbackView, type ScrollEntry } from "../../src/ui/views/index.js";
import { event } from "./views/fixtures.js";

const keyEvent = (name: KeyName): KeyEvent => ({
  type: "key",
  name,
  ctrl: false,
  meta: false,
  shift: false,
});

const hit = (n: number): SearchHit => ({
  agent_id: "a",
  agent_name: "alpha",
  event_id: n,
  kind: "user",
  created_at: new Date(2026, 0, 1),
  line: `l${n}`,
});

describe("/search", () => {
  it("takes the rest of the line as typed, quotes included", () => {
    expect(parseCommand('/search "red fox" -dog')).toEqual({
      ok: true,
      command: { name: "search", query: '"red fox" -dog' },
    });
    expect(parseCommand("/search")).toMatchObject({
      ok: false,
      error: expect.stringContaining("/search needs text"),
    });
  });
});

describe("searchKey", () => {
  const state = { ...openSearch("x"), hits: [hit(1), hit(2), hit(3)] };
  it("moves the selection within the hits and jumps on Enter", () => {
    let s = searchKey(state, keyEvent("down"), 10).state;
    s = searchKey(s, keyEvent("down"), 10).state;
    s = searchKey(s, keyEvent("down"), 10).state;
    expect(s.selected).toBe(2);
    expect(searchKey(s, keyEvent("up"), 10).state.selected).toBe(1);
    expect(searchKey(s, keyEvent("pageup"), 10).state.selected).toBe(0);
    expect(searchKey(s, keyEvent("enter"), 10).action).toEqual({ type: "jump", hit: hit(3) });
  });

  it("closes on Escape; Enter does nothing while searching", () => {
    expect(searchKey(state, keyEvent("escape"), 10).action).toEqual({ type: "close" });
    expect(searchKey(openSearch("x"), keyEvent("enter"), 10).action).toEqual({ type: "none" });
  });
});

describe("scrollToEvent", () => {
  const view = createScrollbackView({ color: false });
  const lines = (entry: ScrollEntry) => view.lines(entry, 40).length;
  const entries: ScrollEntry[] = Array.from({ length: 40 }, (_, i) => ({
    kind: "event",
    event: event("user", `message ${i}`, null, { id: i + 1 }),
  }));

  it("puts the event a third of the way down the window", () => {
    const rows = 12;
    const scroll = scrollToEvent(entries, 10, lines, rows)!;
    const shown = view
      .render(entries, 40, rows, scroll)
      .lines.map((l) => l.replace(/\{[^}]*\}/g, ""));
    expect(shown.indexOf("❯ message 9")).toBe(Math.floor(rows / 3));
  });

  it("is 0 for the newest, undefined for an event not loaded", () => {
    expect(scrollToEvent(entries, 40, lines, 12)).toBe(0);
    expect(scrollToEvent(entries, 999, lines, 12)).toBeUndefined();
  });

  it("counts the lines below an event", () => {
    expect(linesBelowEvent(entries, 38, lines)).toBe(4);
    expect(linesBelowEvent(entries, 999, lines)).toBe(0);
  });
});
