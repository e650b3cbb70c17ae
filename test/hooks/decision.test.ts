// The hooks' contract as pure functions (hooks/config.ts, hooks/decision.ts): the config checked
// with one line naming the key, matchers as Claude Code reads them, a hook's exit and output read
// as Claude Code defines them, and the decision combined with the policy's as the stricter one.
import { describe, expect, it } from "vitest";
import { hooksFor, matches, validateHooks } from "../../src/hooks/config.js";
import {
  combinePre,
  failureLine,
  MODEL_TEXT_MAX,
  postToolUseFeedback,
  preToolUseAnswer,
  type HookRun,
  type PreAnswer,
} from "../../src/hooks/decision.js";
import type { Verdict } from "../../src/policy/policy.js";

const hook = (command: string, extra: object = {}) => ({ type: "command", command, ...extra });

describe("validateHooks", () => {
  it("takes Claude Code's shape, with a default timeout of 60 s", () => {
    const { hooks, warnings } = validateHooks({
      PreToolUse: [{ matcher: "Bash", hooks: [hook("./check.sh", { timeout: 5 })] }],
      Stop: [{ hooks: [hook("notify-send done")] }],
    });
    expect(warnings).toEqual([]);
    expect(hooks.PreToolUse).toEqual([
      { matcher: "Bash", hooks: [{ command: "./check.sh", timeout: 5 }] },
    ]);
    expect(hooks.Stop).toEqual([
      { matcher: "", hooks: [{ command: "notify-send done", timeout: 60 }] },
    ]);
  });

  it("warns once for a Claude Code event warren does not run, and runs nothing of it", () => {
    const { hooks, warnings } = validateHooks({ UserPromptSubmit: [{ hooks: [hook("x")] }] });
    expect(hooks).toEqual({});
    expect(warnings).toEqual([
      expect.stringMatching(/^hooks\.UserPromptSubmit: warren does not run this event/),
    ]);
  });

  const bad: [string, unknown, RegExp][] = [
    ["not an object", [], /^hooks must be \{/],
    ["an unknown event", { PreToolUs: [] }, /^hooks\.PreToolUs is not a hook event/],
    ["an event not a list", { Stop: {} }, /^hooks\.Stop must be a list/],
    ["a group not an object", { Stop: ["x"] }, /^hooks\.Stop\[0\] must be/],
    [
      "an unknown group key",
      { Stop: [{ hooks: [hook("x")], macher: "" }] },
      /^hooks\.Stop\[0\] has an unknown key "macher"/,
    ],
    [
      "a matcher not a string",
      { PreToolUse: [{ matcher: 3, hooks: [hook("x")] }] },
      /^hooks\.PreToolUse\[0\]\.matcher must be a string/,
    ],
    [
      "a bad regular expression",
      { PreToolUse: [{ matcher: "Bash(", hooks: [hook("x")] }] },
      /^hooks\.PreToolUse\[0\]\.matcher is not a valid regular expression/,
    ],
    ["no hooks", { Stop: [{ matcher: "" }] }, /^hooks\.Stop\[0\]\.hooks must be a non-empty list/],
    [
      "a prompt hook",
      { Stop: [{ hooks: [{ type: "prompt", prompt: "p" }] }] },
      /^hooks\.Stop\[0\]\.hooks\[0\] has an unknown key "prompt"/,
    ],
    [
      "a type not command",
      { Stop: [{ hooks: [{ type: "agent", command: "x" }] }] },
      /^hooks\.Stop\[0\]\.hooks\[0\]\.type must be "command"/,
    ],
    [
      "an empty command",
      { Stop: [{ hooks: [hook(" ")] }] },
      /^hooks\.Stop\[0\]\.hooks\[0\]\.command must be a non-empty string/,
    ],
    [
      "a zero timeout",
      { Stop: [{ hooks: [hook("x", { timeout: 0 })] }] },
      /^hooks\.Stop\[0\]\.hooks\[0\]\.timeout must be a positive number/,
    ],
    [
      "a string timeout",
      { Stop: [{ hooks: [hook("x", { timeout: "5" })] }] },
      /\.timeout must be a positive number/,
    ],
  ];
  it.each(bad)("refuses %s with one line naming the key", (_label, value, message) => {
    let thrown: unknown;
    try {
      validateHooks(value);
    } catch (err) {
      thrown = err;
    }
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).not.toContain("\n");
  });
});

describe("matchers", () => {
  const cases: [string, string, boolean][] = [
    ["", "bash", true],
    ["*", "mcp__github__create_issue", true],
    ["bash", "bash", true],
    ["bash", "bash_extra", false],
    ["Bash", "bash", true], // Claude Code's name for warren's tool
    ["Edit|Write", "write_file", true],
    ["Edit|Write", "read_file", false],
    ["write_file|edit_file", "edit_file", true],
    ["mcp__memory__.*", "mcp__memory__create_entities", true],
    ["mcp__memory__.*", "mcp__github__create_issue", false],
    ["^(bash|grep)$", "grep", true],
    ["Notebook.*", "bash", false],
  ];
  it.each(cases)("%j on %s is %s", (matcher, tool, expected) => {
    expect(matches(matcher, tool)).toBe(expected);
  });

  it("hooksFor gathers the matching groups' commands, each once", () => {
    const { hooks } = validateHooks({
      PostToolUse: [
        { matcher: "Write|Edit", hooks: [hook("lint"), hook("fmt")] },
        { matcher: "*", hooks: [hook("lint"), hook("log")] },
      ],
    });
    expect(hooksFor(hooks, "PostToolUse", "edit_file").map((h) => h.command)).toEqual([
      "lint",
      "fmt",
      "log",
    ]);
    expect(hooksFor(hooks, "PostToolUse", "bash").map((h) => h.command)).toEqual(["lint", "log"]);
    expect(hooksFor(hooks, "PreToolUse", "bash")).toEqual([]);
    // No subject (Stop): every group, whatever its matcher.
    expect(hooksFor(hooks, "PostToolUse", undefined).map((h) => h.command)).toEqual([
      "lint",
      "fmt",
      "log",
    ]);
  });
});

const exited = (code: number, stdout = "", stderr = ""): HookRun => ({
  kind: "exited",
  code,
  stdout,
  stderr,
});
const json = (value: unknown) => JSON.stringify(value);
const specific = (decision: string, reason = "") =>
  json({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: decision,
      permissionDecisionReason: reason,
    },
  });

describe("a PreToolUse hook's answer", () => {
  it("exit 2 blocks with its stderr (capped), whatever stdout says", () => {
    expect(preToolUseAnswer("c", exited(2, specific("allow"), "no rm here\n"))).toEqual({
      kind: "block",
      message: "no rm here",
    });
    const long = preToolUseAnswer("c", exited(2, "", "x".repeat(MODEL_TEXT_MAX + 500)));
    expect(long.kind === "block" && long.message.length).toBeLessThan(MODEL_TEXT_MAX + 100);
    expect(long.kind === "block" && long.message).toMatch(/500 characters cut/);
  });

  it("exit 0 with JSON decides; with anything else says nothing", () => {
    expect(preToolUseAnswer("c", exited(0, specific("deny", "not on main")))).toEqual({
      kind: "decision",
      verdict: "deny",
      reason: "not on main",
    });
    expect(preToolUseAnswer("c", exited(0, specific("ask")))).toMatchObject({ verdict: "ask" });
    expect(preToolUseAnswer("c", exited(0, json({ decision: "approve" })))).toMatchObject({
      verdict: "allow",
    });
    expect(preToolUseAnswer("c", exited(0, json({ decision: "block", reason: "r" })))).toEqual({
      kind: "decision",
      verdict: "deny",
      reason: "r",
    });
    expect(preToolUseAnswer("c", exited(0, "all good"))).toEqual({ kind: "none" });
    expect(preToolUseAnswer("c", exited(0, "{not json"))).toEqual({ kind: "none" });
    expect(preToolUseAnswer("c", exited(0, ""))).toEqual({ kind: "none" });
  });

  it("an unknown decision, another exit code, a timeout or a spawn failure is one line", () => {
    const lines = [
      preToolUseAnswer("c", exited(0, specific("maybe"))),
      preToolUseAnswer("c", exited(0, json({ decision: "sure" }))),
      preToolUseAnswer("check.sh", exited(1, "", "boom\nmore")),
      preToolUseAnswer("c", { kind: "timeout", seconds: 2 }),
    ];
    for (const a of lines) {
      expect(a.kind).toBe("failed");
      expect(a.kind === "failed" && a.line).not.toContain("\n");
    }
    expect(lines[2]).toEqual({
      kind: "failed",
      line: "hook PreToolUse (check.sh) failed with exit code 1: boom; ignored",
    });
    expect(lines[3]).toMatchObject({ line: expect.stringMatching(/timed out after 2 s/) });
    expect(preToolUseAnswer("c", { kind: "aborted" })).toEqual({ kind: "none" });
  });

  it("a guard that cannot run (not started, not found, refused) blocks the call, with one line", () => {
    const blocked = {
      kind: "block",
      message: "a hook guarding this call could not run, so the call was not made",
    };
    expect(preToolUseAnswer("c", { kind: "failed", message: "the sandbox is required" })).toEqual({
      ...blocked,
      line: "hook PreToolUse (c) could not run: the sandbox is required; the call it guards is blocked",
    });
    expect(preToolUseAnswer("g.sh", exited(127, "", "bash: g.sh: command not found"))).toEqual({
      ...blocked,
      line: "hook PreToolUse (g.sh) could not run (exit code 127: bash: g.sh: command not found); the call it guards is blocked",
    });
    expect(preToolUseAnswer("g.sh", exited(126, "", "Permission denied"))).toMatchObject(blocked);
    // bubblewrap's own failure (a mount the directory's contents broke): the hook never started.
    const mount = "bwrap: Can't bind mount /oldroot/x on /newroot/w/.claude: No such file";
    expect(preToolUseAnswer("g.sh", exited(1, "", mount))).toEqual({
      ...blocked,
      line: `hook PreToolUse (g.sh) could not run (exit code 1: ${mount}); the call it guards is blocked`,
    });
    expect(
      preToolUseAnswer("g.sh", { kind: "refused", line: "hook PreToolUse (g.sh) refused: x" }),
    ).toEqual({
      ...blocked,
      line: "hook PreToolUse (g.sh) refused: x; the call it guards is blocked",
    });
  });
});

describe("combinePre: never wider than the policy", () => {
  const decision = (verdict: Verdict, reason = ""): PreAnswer => ({
    kind: "decision",
    verdict,
    reason,
  });
  const table: [Verdict, PreAnswer[], string][] = [
    ["allow", [], "allow"],
    ["ask", [], "ask"],
    ["allow", [decision("allow")], "allow"],
    ["ask", [decision("allow")], "ask"], // a hook's allow cannot skip an approval
    ["deny", [decision("allow")], "denied"], // nor undo a deny
    ["allow", [decision("ask")], "ask"],
    ["allow", [decision("deny", "no")], "denied"],
    ["ask", [decision("deny")], "denied"],
    ["allow", [decision("allow"), decision("ask"), decision("allow")], "ask"],
    ["allow", [decision("ask"), decision("deny")], "denied"],
    ["allow", [decision("allow"), { kind: "block", message: "m" }], "blocked"],
    ["allow", [{ kind: "failed", line: "l" }], "allow"], // a failure changes nothing
    ["ask", [{ kind: "none" }], "ask"],
  ];
  it.each(table)("policy %s with %j is %s", (policy, answers, expected) => {
    const out = combinePre(policy, answers);
    expect(out.kind === "verdict" ? out.verdict : out.kind).toBe(expected);
  });

  it("says when the ask came from a hook, with its reason", () => {
    expect(combinePre("allow", [decision("ask", "touches prod")])).toEqual({
      kind: "verdict",
      verdict: "ask",
      byHook: true,
      reason: "touches prod",
    });
    expect(combinePre("ask", [decision("ask", "x")])).toMatchObject({ byHook: false });
  });
});

describe("a PostToolUse hook's feedback", () => {
  it("exit 2's stderr, or JSON decision block's reason; failures are a line", () => {
    expect(postToolUseFeedback("c", exited(2, "", "lint: 3 errors\n"))).toEqual({
      feedback: "lint: 3 errors",
    });
    expect(
      postToolUseFeedback("c", exited(0, json({ decision: "block", reason: "fix it" }))),
    ).toEqual({
      feedback: "fix it",
    });
    expect(postToolUseFeedback("c", exited(0, "ok"))).toEqual({});
    expect(postToolUseFeedback("c", exited(7, "", "x"))).toEqual({
      line: "hook PostToolUse (c) failed with exit code 7: x; ignored",
    });
    expect(failureLine("Stop", "c", exited(2, "", "x"))).toBeUndefined();
  });
});
