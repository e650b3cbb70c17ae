// The TUI's worktree commands as typed: /fork --worktree, /diff, /merge, /discard (issue 30).
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/ui/commands.js";

describe("worktree slash commands", () => {
  it("parses /fork --worktree and the three worktree commands", () => {
    expect(parseCommand('/fork --worktree --name w "fix it"')).toEqual({
      ok: true,
      command: { name: "fork", childName: "w", prompt: "fix it", worktree: true },
    });
    // After the prompt's first word, --worktree is part of the prompt.
    expect(parseCommand("/fork do --worktree")).toEqual({
      ok: true,
      command: { name: "fork", prompt: "do --worktree" },
    });
    expect(parseCommand("/diff w")).toEqual({ ok: true, command: { name: "diff", agent: "w" } });
    expect(parseCommand("/merge")).toEqual({ ok: true, command: { name: "merge" } });
    expect(parseCommand("/discard w")).toEqual({
      ok: true,
      command: { name: "discard", agent: "w" },
    });
    const two = parseCommand("/merge a b");
    expect(two.ok).toBe(false);
    expect((two as { error: string }).error).toMatch(/^\/merge takes at most one agent/);
  });
});
