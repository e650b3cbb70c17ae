// The policy's words: a verdict, one tool's rule, a policy (tool name → rule).

export type Verdict = "allow" | "ask" | "deny";

/** One tool's rule: a verdict, or patterns (`*` = any run of characters) with a fallback. */
export type ToolRule =
  Verdict | { allow?: string[]; ask?: string[]; deny?: string[]; default?: Verdict };

/** Tool name (or "*", any tool not named) → rule. */
export type Policy = Record<string, ToolRule>;
