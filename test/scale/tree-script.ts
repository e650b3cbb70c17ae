// The scripted model of a scale-out run: a tree built by forks (fan-out per depth), each agent
// reporting to its parent by mail and each parent collecting its children with one fan-in wait.
// Replies are a function of the request alone, so a replayed request gets the same answer.
import {
  agentNameOf,
  type RecordedMessage,
  type RecordedRequest,
  type Reply,
} from "../support/fake-model.js";

/** Children per agent at each depth: [10, 10, 9] = root forks 10, each forks 10, each forks 9. */
export type TreeShape = readonly number[];

export const ROOT_NAME = "root";
const WAIT_TIMEOUT_S = 3600;

/** `n3-7` is the 8th child of the 4th child of the root; the root is `root`. */
export function childName(parent: string, index: number): string {
  return parent === ROOT_NAME ? `n${index}` : `${parent}-${index}`;
}

export function parentName(name: string): string | undefined {
  if (name === ROOT_NAME) return undefined;
  const cut = name.lastIndexOf("-");
  return cut < 0 ? ROOT_NAME : name.slice(0, cut);
}

export function depthOf(name: string): number {
  return name === ROOT_NAME ? 0 : name.split("-").length;
}

/** Every agent name of the tree, root first, breadth first. */
export function treeNames(shape: TreeShape): string[] {
  const names = [ROOT_NAME];
  for (let i = 0; i < names.length; i++) {
    const fanout = shape[depthOf(names[i]!)] ?? 0;
    for (let c = 0; c < fanout; c++) names.push(childName(names[i]!, c));
  }
  return names;
}

export function childrenOf(shape: TreeShape, name: string): string[] {
  const fanout = shape[depthOf(name)] ?? 0;
  return Array.from({ length: fanout }, (_, c) => childName(name, c));
}

/** The mail `name` sends its parent (every non-root agent sends exactly one). */
export function reportOf(shape: TreeShape, name: string): string {
  const children = childrenOf(shape, name).length;
  return children === 0 ? `report from ${name}` : `report from ${name}: ${children} received`;
}

/** The model calls an agent makes when nothing goes wrong, by stage. */
export function expectedStages(shape: TreeShape, name: string): string[] {
  const parent = childrenOf(shape, name).length > 0;
  if (name === ROOT_NAME) return ["first", "after:fork", "after:wait"];
  return parent ? ["first", "after:fork", "after:wait", "after:send"] : ["first", "after:send"];
}

export interface StageRecord {
  agent: string;
  stage: string;
}

export interface TreeScript {
  /** For `fake.script({ reply, times: Infinity })`. */
  reply(req: RecordedRequest): Reply;
  /** Every model request answered, by agent and stage, in arrival order. */
  log: StageRecord[];
  /** Replies the script gave up on (a tool failed in a way a crash cannot explain). */
  anomalies: string[];
}

interface ToolOutcome {
  name: string;
  arguments: string;
  value: unknown;
}

export function createTreeScript(shape: TreeShape): TreeScript {
  const log: StageRecord[] = [];
  const anomalies: string[] = [];

  const reply = (req: RecordedRequest): Reply => {
    const name = agentNameOf(req) ?? "?";
    const last = req.lastMessage;
    if (last?.role === "user") {
      // A later user message is mail waking the agent after its turn: nothing scripted sends it.
      if (req.messages.some((m) => m.role === "assistant")) {
        log.push({ agent: name, stage: "woken" });
        return giveUp(`${name}: woken by ${JSON.stringify(last.content).slice(0, 200)}`);
      }
      log.push({ agent: name, stage: "first" });
      return firstMove(shape, name);
    }
    const outcomes = lastOutcomes(req.messages);
    const tool = outcomes.at(-1)?.name ?? "?";
    // A call cut off by a crash: fenced effects (SPEC §3) mean it did nothing, so call it again.
    const interrupted = outcomes.filter((o) => isInterrupted(o.value));
    if (interrupted.length > 0) {
      log.push({ agent: name, stage: `retry:${tool}` });
      return { toolCalls: interrupted.map((o) => ({ name: o.name, arguments: o.arguments })) };
    }
    log.push({ agent: name, stage: `after:${tool}` });
    const failed = outcomes.find((o) => errorOf(o.value) !== undefined);
    if (failed) return giveUp(`${name}: ${failed.name} failed: ${errorOf(failed.value)}`);
    if (tool === "fork") {
      const ids = forkedIds(req.messages);
      const wanted = childrenOf(shape, name);
      const missing = wanted.filter((child) => !ids.has(child));
      if (missing.length > 0) return giveUp(`${name}: no fork result for ${missing.join(", ")}`);
      const fromAgents = wanted.map((child) => ids.get(child)!);
      return {
        toolCalls: [
          { name: "wait", arguments: { timeout: WAIT_TIMEOUT_S, from_agents: fromAgents } },
        ],
      };
    }
    if (tool === "wait") {
      const results =
        (
          outcomes.at(-1)!.value as {
            results?: { name: string; status: string; message?: string }[];
          }
        ).results ?? [];
      const wrong = results.filter(
        (r) => r.status !== "received" || r.message !== reportOf(shape, r.name),
      );
      if (wrong.length > 0 || results.length !== childrenOf(shape, name).length) {
        return giveUp(`${name}: wait returned ${JSON.stringify(results).slice(0, 300)}`);
      }
      if (name === ROOT_NAME) return { text: `root done: ${results.length} reports` };
      return {
        toolCalls: [{ name: "send", arguments: { to: "parent", message: reportOf(shape, name) } }],
      };
    }
    if (tool === "send") return { text: `${name} done` };
    const shown = JSON.stringify(last ?? null).slice(0, 300);
    return giveUp(`${name}: unexpected request after ${tool}, last message ${shown}`);
  };

  const giveUp = (why: string): Reply => {
    anomalies.push(why);
    return { text: `FAILED ${why}` };
  };

  return { reply, log, anomalies };
}

function firstMove(shape: TreeShape, name: string): Reply {
  const children = childrenOf(shape, name);
  if (children.length === 0) {
    return {
      toolCalls: [{ name: "send", arguments: { to: "parent", message: reportOf(shape, name) } }],
    };
  }
  return {
    toolCalls: children.map((child) => ({
      name: "fork",
      // Fresh contexts keep the requests of a deep tree small.
      arguments: { name: child, prompt: `Do part ${child}.`, context: "fresh" },
    })),
  };
}

/** The calls of the last assistant message, each with its arguments and its result's value. */
function lastOutcomes(messages: RecordedMessage[]): ToolOutcome[] {
  const at = messages.findLastIndex((m) => m.role === "assistant");
  if (at < 0) return [];
  const calls = messages[at]!.tool_calls ?? [];
  return messages
    .slice(at + 1)
    .filter((m) => m.role === "tool")
    .map((m) => {
      const call = calls.find((c) => c.id === m.tool_call_id);
      return {
        name: call?.function.name ?? "?",
        arguments: call?.function.arguments ?? "{}",
        value: parse(m.content),
      };
    });
}

/** Child name → id from every successful fork result in the conversation. */
function forkedIds(messages: RecordedMessage[]): Map<string, string> {
  const ids = new Map<string, string>();
  for (const m of messages.filter((m) => m.role === "tool")) {
    const value = parse(m.content) as { agent_id?: unknown; name?: unknown } | null;
    if (typeof value?.agent_id === "string" && typeof value.name === "string") {
      ids.set(value.name, value.agent_id);
    }
  }
  return ids;
}

function errorOf(value: unknown): string | undefined {
  const error = (value as { error?: { code?: string; message?: string } } | null)?.error;
  return error ? `${error.code}: ${error.message}` : undefined;
}

function isInterrupted(value: unknown): boolean {
  return errorOf(value)?.includes("interrupted") ?? false;
}

function parse(content: string | null | undefined): unknown {
  try {
    return JSON.parse(content ?? "null");
  } catch {
    return content;
  }
}
