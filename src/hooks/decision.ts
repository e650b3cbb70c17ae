// What a hook's run means, as pure functions of its exit and output (Claude Code's contract):
// exit 0 with JSON on stdout may decide, exit 2 blocks with stderr as the model's answer, and
// anything else is a failure worth one line that changes nothing. A decision is combined with the
// tool policy's as the stricter of the two (deny > ask > allow): a hook can never widen the policy.
import type { Verdict } from "../policy/policy.js";
import { firstLine } from "../text/format.js";
import type { HookEvent } from "./config.js";

/** How one hook's process ended (run.ts). */
export type HookRun =
  | { kind: "exited"; code: number; stdout: string; stderr: string }
  | { kind: "timeout"; seconds: number }
  | { kind: "failed"; message: string }
  /** Not run: it would run a file an agent could have written (tools/runnable.ts); `line` says which. */
  | { kind: "refused"; line: string }
  | { kind: "aborted" };

/** What one PreToolUse hook answered. */
export type PreAnswer =
  /** `line`: the guard could not run (shown to the person; `message` is what the model reads). */
  | { kind: "block"; message: string; line?: string }
  | { kind: "decision"; verdict: Verdict; reason: string }
  | { kind: "none" }
  | { kind: "failed"; line: string };

/** The longest hook text the model reads (stderr of a block, feedback); the rest is cut. */
export const MODEL_TEXT_MAX = 10_000;
const LINE_MAX = 200;

const RANK: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

export function stricter(a: Verdict, b: Verdict): Verdict {
  return RANK[b] > RANK[a] ? b : a;
}

/** Hook text for the model: trimmed, cut at MODEL_TEXT_MAX with a note. */
export function modelText(text: string): string {
  const t = text.trim();
  if (t.length <= MODEL_TEXT_MAX) return t;
  return `${t.slice(0, MODEL_TEXT_MAX)}\n[… ${t.length - MODEL_TEXT_MAX} characters cut …]`;
}

/** The first line of `text`, shortened for a warning. */
function headline(text: string): string {
  const line = firstLine(text);
  return line.length > LINE_MAX ? `${line.slice(0, LINE_MAX - 1)}…` : line;
}

/** The one warning line of a hook that failed (or undefined when it did not fail). */
export function failureLine(event: HookEvent, command: string, run: HookRun): string | undefined {
  const what = `hook ${event} (${headline(command).slice(0, 60)})`;
  switch (run.kind) {
    case "timeout":
      return `${what} timed out after ${run.seconds} s and was killed; ignored`;
    case "failed":
      return `${what} could not run: ${headline(run.message)}; ignored`;
    case "refused":
      return `${run.line}; not run`;
    case "aborted":
      return undefined;
    case "exited": {
      if (run.code === 0 || run.code === 2) return undefined;
      const said = headline(run.stderr) || headline(run.stdout);
      return `${what} failed with exit code ${run.code}${said ? `: ${said}` : ""}; ignored`;
    }
  }
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (!t.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(t);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const DECISIONS: Record<string, Verdict> = { allow: "allow", ask: "ask", deny: "deny" };
/** Claude Code's older top-level `decision`. */
const OLD_DECISIONS: Record<string, Verdict> = { approve: "allow", block: "deny" };

/** Exit codes of bash for a command it could not find (127) or not execute (126). */
const NOT_RUN_CODES = new Set([126, 127]);

/**
 * Whether bubblewrap itself failed before the hook started (its own exit 1 and message): a mount
 * the working directory's contents broke, which a command there could cause on purpose.
 */
function sandboxNotStarted(run: { code: number; stderr: string }): boolean {
  return run.code === 1 && /^bwrap: /.test(run.stderr);
}

/**
 * Why a PreToolUse guard could not run at all (refused, not started, its program missing or not
 * executable), as one line; undefined when it ran. Such a guard blocks the call it guards
 * (SPEC §9): a guard an agent broke or replaced never lets a call through.
 */
function guardNotRun(command: string, run: HookRun): string | undefined {
  const what = `hook PreToolUse (${headline(command).slice(0, 60)})`;
  if (run.kind === "refused") return `${run.line}; the call it guards is blocked`;
  if (run.kind === "failed") {
    return `${what} could not run: ${headline(run.message)}; the call it guards is blocked`;
  }
  if (run.kind === "exited" && (NOT_RUN_CODES.has(run.code) || sandboxNotStarted(run))) {
    const said = headline(run.stderr) || headline(run.stdout);
    return `${what} could not run (exit code ${run.code}${said ? `: ${said}` : ""}); the call it guards is blocked`;
  }
  return undefined;
}

/** What a PreToolUse hook's run answers (its failures as a line, for the caller to show). */
export function preToolUseAnswer(command: string, run: HookRun): PreAnswer {
  const notRun = guardNotRun(command, run);
  if (notRun) {
    return {
      kind: "block",
      message: "a hook guarding this call could not run, so the call was not made",
      line: notRun,
    };
  }
  const failed = failureLine("PreToolUse", command, run);
  if (failed) return { kind: "failed", line: failed };
  if (run.kind !== "exited") return { kind: "none" };
  if (run.code === 2) {
    const said = modelText(run.stderr);
    return { kind: "block", message: said || "(the hook gave no reason)" };
  }
  const out = parseJsonObject(run.stdout);
  if (!out) return { kind: "none" };
  const specific = out.hookSpecificOutput as Record<string, unknown> | undefined;
  const decision =
    specific && typeof specific === "object" ? specific.permissionDecision : undefined;
  if (decision !== undefined) {
    const verdict = typeof decision === "string" ? DECISIONS[decision] : undefined;
    if (!verdict) {
      return {
        kind: "failed",
        line: `hook PreToolUse (${headline(command).slice(0, 60)}) answered permissionDecision ${JSON.stringify(decision).slice(0, 40)}, not allow, deny or ask; ignored`,
      };
    }
    const reason = specific!.permissionDecisionReason;
    return { kind: "decision", verdict, reason: typeof reason === "string" ? reason : "" };
  }
  if (out.decision !== undefined) {
    const verdict = typeof out.decision === "string" ? OLD_DECISIONS[out.decision] : undefined;
    if (!verdict) {
      return {
        kind: "failed",
        line: `hook PreToolUse (${headline(command).slice(0, 60)}) answered decision ${JSON.stringify(out.decision).slice(0, 40)}, not approve or block; ignored`,
      };
    }
    return {
      kind: "decision",
      verdict,
      reason: typeof out.reason === "string" ? out.reason : "",
    };
  }
  return { kind: "none" };
}

/** The call's fate after the policy (not deny) and every PreToolUse hook answered. */
export type PreOutcome =
  | { kind: "blocked"; message: string }
  | { kind: "denied"; reason: string }
  | { kind: "verdict"; verdict: "allow" | "ask"; byHook: boolean; reason: string };

/**
 * Combines the policy's verdict with the hooks' answers: a block wins, then the stricter verdict;
 * a hook's `allow` changes nothing (the policy's `ask` stays asked, its `deny` never gets here).
 */
export function combinePre(policy: Verdict, answers: readonly PreAnswer[]): PreOutcome {
  const blocks = answers.filter((a) => a.kind === "block");
  if (blocks.length > 0)
    return { kind: "blocked", message: blocks.map((b) => b.message).join("\n") };
  let verdict = policy;
  let byHook = false;
  let reason = "";
  for (const a of answers) {
    if (a.kind !== "decision") continue;
    if (RANK[a.verdict] > RANK[verdict]) {
      verdict = a.verdict;
      byHook = true;
      reason = a.reason;
    }
  }
  if (verdict === "deny") return { kind: "denied", reason: modelText(reason) };
  return { kind: "verdict", verdict, byHook, reason: modelText(reason) };
}

/** What a PostToolUse hook said to the model: exit 2's stderr, or JSON `decision: "block"`'s reason. */
export function postToolUseFeedback(
  command: string,
  run: HookRun,
): { feedback?: string; line?: string } {
  const line = failureLine("PostToolUse", command, run);
  if (line) return { line };
  if (run.kind !== "exited") return {};
  if (run.code === 2) return { feedback: modelText(run.stderr) || "(the hook gave no reason)" };
  const out = parseJsonObject(run.stdout);
  if (out?.decision === "block" && typeof out.reason === "string" && out.reason.trim()) {
    return { feedback: modelText(out.reason) };
  }
  return {};
}
