// The tool policy: for each tool `allow`, `ask` or `deny`, with patterns for `bash` commands and
// file paths. A config's policy sits over the defaults (reads allowed, writes and bash asked); a
// profile's policy, and so a fork's, can only narrow it: every policy in an agent's chain is
// asked and the strictest answer wins (deny > ask > allow).

export type Verdict = "allow" | "ask" | "deny";

/** One tool's rule: a verdict, or patterns (`*` = any run of characters) with a fallback. */
export type ToolRule =
  Verdict | { allow?: string[]; ask?: string[]; deny?: string[]; default?: Verdict };

/** Tool name (or "*", any tool not named) → rule. */
export type Policy = Record<string, ToolRule>;

/** What a new user gets: reading and the agent tools run, writing and commands are asked. */
export const DEFAULT_POLICY: Policy = {
  read_file: "allow",
  glob: "allow",
  grep: "allow",
  fork: "allow",
  send: "allow",
  wait: "allow",
  kill: "allow",
  write_file: "ask",
  edit_file: "ask",
  bash: "ask",
  // MCP servers' tools (mcp/catalog.ts): asked, like bash.
  "mcp__*": "ask",
  "*": "ask",
};

/** How `ask` is answered in a tree: by a person, or automatically (SPEC §1, `--approve`). */
export type ApproveMode = "ask" | "all" | "none";

export function parseApproveMode(value: string, name = "--approve"): ApproveMode {
  const mode = value.trim().toLowerCase();
  if (mode === "ask" || mode === "all" || mode === "none") return mode;
  if (mode === "ask-fail") return "none";
  throw new Error(`${name} must be ask, all or none (ask-fail), got ${JSON.stringify(value)}`);
}

const VERDICTS: readonly string[] = ["allow", "ask", "deny"];
const RANK: Record<Verdict, number> = { allow: 0, ask: 1, deny: 2 };

/** Checks a policy from a config file; throws a one-line message naming the bad entry. */
export function validatePolicy(value: unknown, name: string): Policy | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${name} must be an object of tool names to "allow", "ask" or "deny"`);
  }
  for (const [tool, rule] of Object.entries(value as Record<string, unknown>)) {
    const where = `${name}.${tool}`;
    if (typeof rule === "string") {
      if (!VERDICTS.includes(rule)) throw new Error(`${where} must be allow, ask or deny`);
      continue;
    }
    if (!rule || typeof rule !== "object" || Array.isArray(rule)) {
      throw new Error(`${where} must be allow, ask, deny or {allow, ask, deny: [patterns]}`);
    }
    for (const [key, list] of Object.entries(rule as Record<string, unknown>)) {
      if (key === "default") {
        if (typeof list !== "string" || !VERDICTS.includes(list)) {
          throw new Error(`${where}.default must be allow, ask or deny`);
        }
      } else if (VERDICTS.includes(key)) {
        if (!Array.isArray(list) || list.some((p) => typeof p !== "string" || p.length > 500)) {
          throw new Error(`${where}.${key} must be a list of patterns (strings)`);
        }
      } else {
        throw new Error(`${where} has an unknown key "${key}" (allow, ask, deny, default)`);
      }
    }
  }
  return value as Policy;
}

/** What a call's patterns are matched against: the command, the path, else the empty string. */
export function callSubject(tool: string, args: unknown): string {
  if (!args || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  const key = tool === "bash" ? "command" : "path" in a ? "path" : "pattern";
  const value = a[key];
  return typeof value === "string" ? value : "";
}

/** `*` matches any run of characters, everything else itself; linear in practice. */
export function matchesPattern(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== "*" && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

/**
 * A policy's rule for `tool`: its own entry, else the longest `*` pattern naming it
 * (`mcp__github__*`), else `*`.
 */
export function ruleFor(policy: Policy | undefined, tool: string): ToolRule | undefined {
  if (!policy) return undefined;
  const own = policy[tool];
  if (own !== undefined) return own;
  let best: string | undefined;
  for (const key of Object.keys(policy)) {
    if (key === "*" || !key.includes("*") || !matchesPattern(key, tool)) continue;
    if (best === undefined || key.length > best.length) best = key;
  }
  return best !== undefined ? policy[best] : policy["*"];
}

/** One policy's answer for a call, or undefined when it has no rule for the tool. */
function verdictOf(policy: Policy, tool: string, subject: string): Verdict | undefined {
  const rule = ruleFor(policy, tool);
  if (rule === undefined) return undefined;
  if (typeof rule === "string") return rule;
  const hit = (list: string[] | undefined) => list?.some((p) => matchesPattern(p, subject));
  if (hit(rule.deny)) return "deny";
  if (hit(rule.allow)) return "allow";
  if (hit(rule.ask)) return "ask";
  return rule.default;
}

export interface PolicyAnswer {
  verdict: Verdict;
  subject: string;
}

/**
 * The verdict for `tool` called with `args` under the config's policy (over the defaults) and the
 * agent's chain of narrowing policies (profiles, inherited by forks): the strictest one wins.
 */
export function decide(
  base: Policy | undefined,
  chain: readonly Policy[],
  tool: string,
  args: unknown,
): PolicyAnswer {
  const subject = callSubject(tool, args);
  // The config's rule for the tool (or its "*"), where it has one that answers; else the default.
  const own = ruleFor(base, tool);
  let verdict: Verdict =
    (own === undefined ? undefined : verdictOf({ [tool]: own }, tool, subject)) ??
    verdictOf(DEFAULT_POLICY, tool, subject)!;
  for (const policy of chain) {
    const v = verdictOf(policy, tool, subject);
    if (v !== undefined && RANK[v] > RANK[verdict]) verdict = v;
  }
  return { verdict, subject };
}

/**
 * The pattern "allow for the tree" remembers: for a command its first word and a star (`git *`,
 * which also covers the bare `git`), for any other tool every call (`*`).
 */
export function treePattern(tool: string, subject: string): string {
  if (tool !== "bash") return "*";
  const first = subject.trim().split(/\s+/)[0] ?? "";
  return first ? `${first} *` : "*";
}

/** Does a remembered tree pattern cover this call's subject? */
export function treePatternCovers(pattern: string, subject: string): boolean {
  const s = subject.trim();
  return matchesPattern(pattern, s) || matchesPattern(pattern, `${s} `);
}
