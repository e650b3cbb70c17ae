// `/rewind` and `/fork --at N` (issue 43): their parsing, and rewound events folded out of the
// scrollback (the rewind's own line stays, naming how many).
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/ui/commands.js";
import { entryRows } from "../../src/ui/views/entry-lines.js";
import { event } from "./views/fixtures.js";

describe("/rewind and /fork --at", () => {
  it("parse a turn and what to rewind, or fail in one line", () => {
    expect(parseCommand("/rewind")).toEqual({
      ok: true,
      command: { name: "rewind", mode: "both" },
    });
    expect(parseCommand("/rewind 2")).toEqual({
      ok: true,
      command: { name: "rewind", turn: 2, mode: "both" },
    });
    expect(parseCommand("/rewind 3 files")).toEqual({
      ok: true,
      command: { name: "rewind", turn: 3, mode: "files" },
    });
    expect(parseCommand("/rewind 3 conversation")).toEqual({
      ok: true,
      command: { name: "rewind", turn: 3, mode: "conversation" },
    });
    for (const bad of ["/rewind x", "/rewind 0", "/rewind 2 everything", "/rewind 2 files more"]) {
      const parsed = parseCommand(bad);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error.split("\n")).toHaveLength(1);
    }
    expect(parseCommand(`/fork --at 2 --worktree "try again"`)).toEqual({
      ok: true,
      command: { name: "fork", at: 2, worktree: true, prompt: "try again" },
    });
    expect(parseCommand("/fork --at two").ok).toBe(false);
  });

  it("fold rewound events: they show nothing, the rewind's line shows", () => {
    const rewound = event("assistant", "an answer the rewind undid", null, {
      rewound_at: new Date(),
    });
    expect(entryRows({ kind: "event", event: rewound }, 80)).toEqual([]);
    const live = event("assistant", "an answer that stays");
    expect(entryRows({ kind: "event", event: live }, 80).length).toBeGreaterThan(0);
    const marker = event("system", "⟲ rewound to before turn 2: 5 events folded here");
    expect(JSON.stringify(entryRows({ kind: "event", event: marker }, 80))).toContain(
      "5 events folded",
    );
  });
});
