// `/rewind` and `/fork --at N` (issue 43): their parsing (the picker and the folded events:
// views/rewind-picker.test.ts).
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/ui/commands.js";

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
});
