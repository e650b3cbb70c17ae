// The person's slash commands: shell-like argument splitting and parsing into a typed command, or
// a one-line explanation of what is wrong (with a "did you mean" for a mistyped name).

export type UiCommand =
  | { name: "capture" }
  | { name: "cancel" }
  | { name: "fork"; childName?: string; prompt?: string; worktree?: boolean; at?: number }
  | { name: "rewind"; turn?: number; mode: "both" | "files" | "conversation" }
  | { name: "diff"; agent?: string }
  | { name: "merge"; agent?: string }
  | { name: "discard"; agent?: string }
  | { name: "kill"; agent?: string }
  | { name: "stop"; agent?: string }
  | { name: "send"; agent: string; message: string }
  | { name: "wait"; timeoutSeconds: number; agents: string[] }
  | { name: "reap" }
  | { name: "agents" }
  | { name: "model"; model: string }
  | { name: "approve"; id?: number; tree: boolean }
  | { name: "deny"; id?: number; reason?: string }
  | { name: "search"; query: string }
  | { name: "tasks" }
  | { name: "mcp"; allow?: boolean }
  | { name: "help" }
  | { name: "exit" };

export type ParsedCommand = { ok: true; command: UiCommand } | { ok: false; error: string };

export const COMMAND_USAGE: Record<UiCommand["name"], string> = {
  capture: "/capture — compose a task: typed lines are saved, never sent to a model",
  cancel: "/cancel — end capture without forking",
  fork: '/fork [--name NAME] [--worktree] [--at N] ["PROMPT"] — a child (with the captured text as its task in capture; --worktree: in a git worktree of its own; --at N: a sibling with the conversation before turn N, and with --worktree that turn\'s files)',
  rewind:
    "/rewind [N [files|conversation]] — the agent's turns; undo turn N and all after it (files and conversation, or one of them)",
  diff: "/diff [AGENT] — a worktree child's change against its base (default: this one)",
  merge:
    "/merge [AGENT] — commit a worktree child's work and merge its branch into its parent's tree",
  discard: "/discard [AGENT] — remove a worktree child's worktree and branch (asks first)",
  kill: "/kill [AGENT] — kill an agent and its descendants (default: this one)",
  stop: "/stop [AGENT] — interrupt an agent and all its descendants; they stay alive (default: this one)",
  send: "/send AGENT MESSAGE — mail from this agent",
  wait: "/wait TIMEOUT [AGENT…] — this agent waits for mail (fan-in when agents are given)",
  reap: "/reap — remove dead agents from navigation",
  agents: "/agents — the tree with states",
  model: "/model NAME — set this agent's model (Tab completes)",
  approve:
    "/approve [ID] [--tree] — allow a tool call waiting for approval (--tree: its pattern, for the tree)",
  deny: "/deny [ID] [REASON…] — deny a tool call waiting for approval (the model reads the reason)",
  search:
    "/search TEXT — search every agent's transcript in the tree (dead ones too); Enter jumps to a hit",
  tasks: "/tasks — the tree's task board, live (Esc closes)",
  mcp: "/mcp [allow] — the MCP servers with their state and tools (as `warren mcp list --cached`); allow: start the project .mcp.json's servers",
  help: "/help — keys and commands",
  exit: "/exit — quit (agents keep their state; a worker or the next warren resumes them)",
};

const NAMES = Object.keys(COMMAND_USAGE) as UiCommand["name"][];
const ALIASES: Record<string, UiCommand["name"]> = { quit: "exit", q: "exit", "?": "help" };

export const WAIT_MAX_SECONDS = 3600;

/** Splits like a shell: spaces separate, quotes group ('…' literal, "…" with \ escapes). */
export function splitArgs(
  text: string,
): { ok: true; args: string[] } | { ok: false; error: string } {
  const args: string[] = [];
  let current = "";
  let started = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else current += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && i + 1 < text.length && /["\\$`]/.test(text[i + 1]!))
        current += text[++i];
      else current += ch;
      continue;
    }
    if (/\s/.test(ch)) {
      if (started) args.push(current);
      current = "";
      started = false;
      continue;
    }
    started = true;
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "\\" && i + 1 < text.length) current += text[++i];
    else current += ch;
  }
  if (quote) return { ok: false, error: `unclosed ${quote === '"' ? "double" : "single"} quote` };
  if (started) args.push(current);
  return { ok: true, args };
}

/** Is this input a command (a leading slash), rather than a message? `//x` sends "/x". */
export function isCommand(text: string): boolean {
  return /^\/[^/\s]/.test(text.trimStart());
}

export function parseCommand(text: string): ParsedCommand {
  const trimmed = text.trim();
  const head = trimmed.slice(1).split(/\s+/)[0] ?? "";
  const rest = trimmed.slice(1 + head.length).trim();
  const name = ALIASES[head.toLowerCase()] ?? NAMES.find((n) => n === head.toLowerCase());
  if (!name) {
    const guess = suggest(head);
    return fail(
      `unknown command /${head}${guess ? ` — did you mean /${guess}?` : ""} (/help lists commands)`,
    );
  }
  const split = splitArgs(rest);
  if (!split.ok) return fail(`/${name}: ${split.error}`);
  const args = split.args;
  const usage = `usage: ${COMMAND_USAGE[name].split(" — ")[0]}`;
  const none = (command: UiCommand): ParsedCommand =>
    args.length > 0 ? fail(`/${name} takes no arguments (${usage})`) : { ok: true, command };
  switch (name) {
    case "capture":
    case "cancel":
    case "reap":
    case "agents":
    case "tasks":
    case "help":
    case "exit":
      return none({ name });
    case "mcp":
      if (args.length === 0) return { ok: true, command: { name } };
      if (args.length === 1 && args[0] === "allow")
        return { ok: true, command: { name, allow: true } };
      return fail(`/mcp takes nothing or "allow" (${usage})`);
    case "fork":
      return parseFork(args, usage);
    case "rewind": {
      if (args.length === 0) return { ok: true, command: { name, mode: "both" } };
      const turn = Number(args[0]);
      const mode = args[1] === undefined ? "both" : args[1];
      if (!/^\d{1,9}$/.test(args[0]!) || turn < 1 || args.length > 2) {
        return fail(`/rewind takes a turn number and "files" or "conversation" (${usage})`);
      }
      if (mode !== "both" && mode !== "files" && mode !== "conversation") {
        return fail(`/rewind: "${mode}" is neither "files" nor "conversation" (${usage})`);
      }
      return { ok: true, command: { name, turn, mode } };
    }
    case "kill":
    case "stop":
    case "diff":
    case "merge":
    case "discard":
      if (args.length > 1) return fail(`/${name} takes at most one agent (${usage})`);
      return { ok: true, command: { name, ...(args[0] ? { agent: args[0] } : {}) } };
    case "send": {
      if (args.length < 2) return fail(`/send needs an agent and a message (${usage})`);
      const [agent, ...words] = args;
      return { ok: true, command: { name, agent: agent!, message: words.join(" ") } };
    }
    case "wait": {
      const [timeout, ...agents] = args;
      if (timeout === undefined) return fail(`/wait needs a timeout in seconds (${usage})`);
      const seconds = Number(timeout);
      if (!/^\d+(\.\d+)?$/.test(timeout) || seconds > WAIT_MAX_SECONDS) {
        return fail(`/wait: timeout must be 0-${WAIT_MAX_SECONDS} seconds, not "${timeout}"`);
      }
      return { ok: true, command: { name, timeoutSeconds: seconds, agents } };
    }
    case "approve": {
      const tree = args.includes("--tree");
      const rest = args.filter((a) => a !== "--tree");
      const id = rest[0] === undefined ? undefined : requestId(rest[0]);
      if (rest.length > 1 || (rest[0] !== undefined && id === undefined)) {
        return fail(`/approve takes a request number and --tree (${usage})`);
      }
      return { ok: true, command: { name, tree, ...(id !== undefined ? { id } : {}) } };
    }
    case "deny": {
      const [first, ...words] = args;
      const id = first === undefined ? undefined : requestId(first);
      const reason = (id === undefined ? args : words).join(" ").trim();
      return {
        ok: true,
        command: { name, ...(id !== undefined ? { id } : {}), ...(reason ? { reason } : {}) },
      };
    }
    case "search": {
      // The text as typed (quotes kept: "a phrase" is websearch syntax), not split like arguments.
      if (!rest) return fail(`/search needs text to look for (${usage})`);
      return { ok: true, command: { name, query: rest } };
    }
    case "model":
      if (args.length !== 1) return fail(`/model needs one model name (${usage})`);
      return { ok: true, command: { name, model: args[0]! } };
  }
}

/** An approval request's number as typed ("12" or "#12"). */
function requestId(arg: string): number | undefined {
  return /^#?\d{1,15}$/.test(arg) ? Number(arg.replace("#", "")) : undefined;
}

function parseFork(args: string[], usage: string): ParsedCommand {
  let childName: string | undefined;
  let worktree = false;
  let at: number | undefined;
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--name" || arg === "-n") {
      const value = args[++i];
      if (value === undefined || !value.trim())
        return fail(`/fork: --name needs a value (${usage})`);
      childName = value;
    } else if (arg.startsWith("--name=")) {
      childName = arg.slice("--name=".length);
      if (!childName.trim()) return fail(`/fork: --name needs a value (${usage})`);
    } else if (arg === "--worktree" && words.length === 0) {
      worktree = true;
    } else if (arg === "--at" && words.length === 0) {
      const value = args[++i];
      if (value === undefined || !/^\d{1,9}$/.test(value) || Number(value) < 1)
        return fail(`/fork: --at needs a turn number (${usage})`);
      at = Number(value);
    } else if (arg === "--") {
      words.push(...args.slice(i + 1));
      break;
    } else if (arg.startsWith("--") && words.length === 0) {
      return fail(`/fork: unknown option ${arg} (${usage})`);
    } else {
      words.push(arg);
    }
  }
  const prompt = words.join(" ").trim();
  return {
    ok: true,
    command: {
      name: "fork",
      ...(childName !== undefined ? { childName } : {}),
      ...(prompt ? { prompt } : {}),
      ...(worktree ? { worktree } : {}),
      ...(at !== undefined ? { at } : {}),
    },
  };
}

/** Command names starting with `prefix` (for Tab completion). */
export function completeCommand(prefix: string): string[] {
  return NAMES.filter((n) => n.startsWith(prefix.toLowerCase()));
}

function suggest(word: string): string | undefined {
  const lower = word.toLowerCase();
  if (!lower) return undefined;
  const prefixed = NAMES.filter((n) => n.startsWith(lower));
  if (prefixed.length === 1) return prefixed[0];
  let best: { name: string; distance: number } | undefined;
  for (const name of NAMES) {
    const distance = editDistance(lower, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= 2 ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

function fail(error: string): ParsedCommand {
  return { ok: false, error };
}
