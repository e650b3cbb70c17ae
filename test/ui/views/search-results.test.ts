// The search result list as a person sees it (blessed's screen buffer): agent, time, line; the
// selection inverse and kept in view; searching / no matches / a failure; escaped agent text.
import { describe, expect, it } from "vitest";
import type { SearchHit } from "../../../src/search/search.js";
import { renderSearchResults } from "../../../src/ui/views/search-results.js";
import { displayWidth } from "../../../src/ui/views/text-width.js";
import { showWithin } from "./helpers.js";

const NOW = new Date(2026, 10, 23, 21, 30, 0);
const ID = "dd1faeff-1111-4222-8333-444455556666";

const hit = (n: number, fields: Partial<SearchHit> = {}): SearchHit => ({
  agent_id: ID,
  agent_name: "alpha",
  event_id: n,
  kind: "assistant",
  created_at: new Date(2026, 10, 23, 21, 29, n % 60),
  line: `line number ${n}`,
  ...fields,
});

const show = (view: Parameters<typeof renderSearchResults>[0], width = 70, height = 5) =>
  showWithin(renderSearchResults(view, NOW, width, height, { color: true }), width + 2);

describe("renderSearchResults", () => {
  it("lists agent, time and line in a frame titled with the query and the count", () => {
    const rows = show({
      query: "number",
      hits: [hit(7), hit(3, { agent_name: "beta" })],
      selected: 0,
    });
    expect(rows[0]).toContain("search number — 2 matches");
    expect(rows[1]).toContain("› alpha dd1faeff  21:29:07  line number 7");
    // Names and times of different widths: the lines still start in one column.
    expect(rows[2]).toContain("  beta  dd1faeff  21:29:03  line number 3");
    expect(rows).toHaveLength(7);
  });

  it("shows the day for older hits", () => {
    const rows = show({
      query: "x",
      hits: [hit(1, { created_at: new Date(2026, 10, 2, 9, 5) })],
      selected: 0,
    });
    expect(rows[1]).toContain("Nov 02 09:05");
  });

  it("aligns the matching lines when names and times differ in width", () => {
    const rows = show(
      {
        query: "x",
        hits: [
          hit(1, { agent_name: "a" }),
          hit(2, { agent_name: "a-much-longer-name", created_at: new Date(2026, 10, 2, 9, 5) }),
          hit(3, { agent_name: "数据" }),
        ],
        selected: 0,
      },
      90,
    );
    // In cells: the wide name's characters take two each.
    const starts = rows
      .slice(1, 4)
      .map((row) => displayWidth(row.slice(0, row.indexOf("line number"))));
    expect(new Set(starts).size).toBe(1);
  });

  it("keeps the selection in view", () => {
    const hits = Array.from({ length: 30 }, (_, i) => hit(i));
    const rows = show({ query: "x", hits, selected: 25 });
    expect(rows.join("\n")).toContain("› alpha dd1faeff  21:29:25  line number 25");
    expect(rows.join("\n")).not.toContain("line number 2 ");
  });

  it("says searching, no matches, or why it failed", () => {
    expect(show({ query: "x", hits: undefined, selected: 0 }).join("\n")).toContain("searching…");
    expect(show({ query: "x", hits: [], selected: 0 })[1]).toContain("no matches");
    expect(
      show({ query: "x", hits: [], selected: 0, error: "search failed: database unreachable" })[1],
    ).toContain("search failed: database unreachable");
  });

  it("draws agent text literally: blessed tags and control characters", () => {
    const rows = show({
      query: "{bold}q\u001b",
      hits: [hit(1, { agent_name: "{red-fg}x", line: "{/}\u0007 y" })],
      selected: 0,
    });
    expect(rows[0]).toContain("search {bold}q\\x1b");
    expect(rows[1]).toContain("{red-fg}x");
    expect(rows[1]).toContain("{/}\\x07 y");
  });

  it("cuts long lines to the width", () => {
    const rows = show(
      { query: "x", hits: [hit(1, { line: "word ".repeat(60) })], selected: 0 },
      50,
    );
    expect(rows[1]!.trimEnd().endsWith("…│")).toBe(true);
  });
});
