// What the person is told about agents they are not viewing (src/ui/notify.ts): the title's
// counts, one bell and OSC 9 per new need, nothing for what needed them before the TUI opened.
import { describe, expect, it } from "vitest";
import type { PendingApproval } from "../../src/approvals/approvals.js";
import { createNotifier, osc9, titleFor, type NotifyState } from "../../src/ui/notify.js";
import { agent } from "./views/fixtures.js";

function state(fields: Partial<NotifyState> = {}): NotifyState {
  const root = agent({ name: "root", state: "waiting" });
  const kid = agent({ name: "kid", state: "running" });
  return {
    agents: new Map([
      [root.id, root],
      [kid.id, kid],
    ]),
    currentId: root.id,
    needs: new Map(),
    approvals: [],
    ...fields,
  };
}

function recorder(enabled = true) {
  const calls: string[] = [];
  const notifier = createNotifier({
    enabled,
    setTitle: (t) => calls.push(`title ${t}`),
    bell: () => calls.push("bell"),
    osc: (s) => calls.push(`osc ${JSON.stringify(s)}`),
  });
  return { calls, notifier };
}

describe("the terminal title", () => {
  it("counts running agents and those that need the person", () => {
    const s = state();
    expect(titleFor(s)).toBe("warren · 2 running");
    const kid = [...s.agents.values()][1]!;
    const asking = { agent_id: kid.id } as PendingApproval;
    expect(titleFor({ ...s, approvals: [asking] })).toBe("warren · 2 running · 1 needs you");
  });
});

describe("alerts", () => {
  it("ring once per new need of an agent not viewed, naming it", () => {
    const { calls, notifier } = recorder();
    const s = state();
    const kid = [...s.agents.values()][1]!;
    notifier.update(s);
    expect(calls).toEqual(["title warren · 2 running"]);
    calls.length = 0;
    notifier.update({ ...s, needs: new Map([[kid.id, "finished"]]) });
    expect(calls).toEqual([
      "title warren · 2 running · 1 needs you",
      "bell",
      `osc ${JSON.stringify("\x1b]9;warren: kid finished\x07")}`,
    ]);
    calls.length = 0;
    notifier.update({ ...s, needs: new Map([[kid.id, "finished"]]) });
    expect(calls).toEqual([]); // the same need rings once
  });

  it("stay quiet for the viewed agent, for needs older than the TUI, and when turned off", () => {
    const s = state();
    const kid = [...s.agents.values()][1]!;
    const old = recorder();
    old.notifier.update({ ...s, needs: new Map([[kid.id, "error"]]) });
    expect(old.calls.filter((c) => c === "bell")).toEqual([]);
    const viewed = recorder();
    viewed.notifier.update(s);
    viewed.notifier.update({ ...s, currentId: kid.id, needs: new Map([[kid.id, "error"]]) });
    expect(viewed.calls.filter((c) => c === "bell")).toEqual([]);
    const off = recorder(false);
    off.notifier.update(s);
    off.notifier.update({ ...s, needs: new Map([[kid.id, "error"]]) });
    expect(off.calls).toEqual([]);
  });

  it("cannot be ended early by an agent's name", () => {
    expect(osc9("a\x07b\x1b]0;evil\x1b\\c")).toBe("\x1b]9;a b ]0;evil \\c\x07");
  });
});
