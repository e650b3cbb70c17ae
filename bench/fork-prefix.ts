// What a prompt cache serves of an inherited fan-in (issue 31, SPEC §7): a root with about 20k
// tokens of conversation forks 10 children with `context: "inherit"` in one response; each
// child's first request, built by the runtime's own buildContext, is looked up in the fake model
// server's prefix cache (test/support/fake-model.ts PrefixCache: the longest prefix seen before,
// in tokens of four characters) after the root's request that forked them. The reference is the
// same fan-in in the shape forks had before: the child's own system prompt, then the parent's
// conversation quoted as one user message, then its task (computed here from the same rows with
// the framing functions that built it, against a cache of its own).
import type { AgentRow } from "../src/agents/agents.sql.js";
import { appendEvent } from "../src/agents/events.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { getAgent } from "../src/agents/refs.js";
import { checkedFork, createTree, runForks } from "../src/agents/tree.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { quotedConversation, taskText } from "../src/llm/framing.js";
import type { ChatMessage, ToolSpec } from "../src/llm/model.js";
import { buildContext, conversation, repairToolPairs } from "../src/runtime/context.js";
import { systemPrompt } from "../src/runtime/system-prompt.js";
import { toolSpecs, toolsFor } from "../src/tools/registry.js";
import { PrefixCache } from "../test/support/fake-model.js";
import { row, type BenchContext, type BenchRow } from "./report.js";

const CHILDREN = 10;
/** The parent's conversation before the fork, in tokens of four characters. */
const PARENT_TOKENS = 20_000;
/** Example prices, dollars per million tokens (OpenAI's gpt-4.1: input, cached input). */
const PRICE_INPUT = 2.0;
const PRICE_CACHED = 0.5;

interface Served {
  promptTokens: number;
  cachedTokens: number;
}

const serialised = (messages: ChatMessage[], tools: ToolSpec[]) =>
  JSON.stringify(tools) + messages.map((m) => JSON.stringify(m)).join("");

export async function forkPrefix(context: BenchContext): Promise<BenchRow[]> {
  const db = createDb(context.url, { max: 1, applicationName: "warren-bench-fork-prefix" });
  try {
    const tools = toolSpecs(toolsFor(undefined));
    const root = await createTree(db, { name: "root" });
    await longConversation(db, root.id);
    // The root's request that answers with the forks, seen by both caches.
    const parentRequest = serialised(await buildContext(db, root), tools);
    const now = new PrefixCache();
    const before = new PrefixCache();
    now.serve(parentRequest);
    before.serve(parentRequest);
    const children = await forkChildren(db, root);
    const shared: Served[] = [];
    const quoted: Served[] = [];
    for (const child of children) {
      shared.push(now.serve(serialised(await buildContext(db, child), tools)));
      quoted.push(before.serve(serialised(await oldShape(db, child, root), tools)));
    }
    const uncached = (s: Served[]) => s.reduce((n, x) => n + x.promptTokens - x.cachedTokens, 0);
    const dollars = (s: Served[]) =>
      s.reduce(
        (d, x) =>
          d +
          ((x.promptTokens - x.cachedTokens) * PRICE_INPUT + x.cachedTokens * PRICE_CACHED) / 1e6,
        0,
      );
    const share = (s: Served) => (100 * s.cachedTokens) / s.promptTokens;
    const minShare = Math.min(...shared.map(share));
    context.log(
      `fork-prefix: parent ${Math.round(parentRequest.length / 4)} tokens; child first request ` +
        `${shared[0]!.promptTokens} tokens, ${shared[0]!.cachedTokens} cached`,
    );
    return [
      row(
        "inherited child's first request served by a prefix cache (lowest of 10)",
        minShare,
        "%",
        "the same child in the old shape (own system prompt, quoted conversation)",
        Math.min(...quoted.map(share)),
      ),
      row(
        `uncached input tokens, fan-in of ${CHILDREN} inherited children (20k-token parent)`,
        uncached(shared),
        "tokens",
        "the same fan-in in the old shape",
        uncached(quoted),
      ),
      row(
        `that fan-in's first requests in dollars ($${PRICE_INPUT}/M input, $${PRICE_CACHED}/M cached)`,
        dollars(shared),
        "$",
        "the same fan-in in the old shape",
        dollars(quoted),
      ),
    ];
  } finally {
    await closeDb(db);
  }
}

/** About PARENT_TOKENS of a root's work: a task, then rounds of a bash call and its output. */
async function longConversation(db: Db, rootId: string): Promise<void> {
  await appendEvent(db, rootId, "user", "Survey this repository and report what each module does.");
  const output = (i: number) =>
    Array.from(
      { length: 24 },
      (_, line) => `src/module-${i}/file-${line}.ts: export function f${line}() {}`,
    ).join("\n");
  for (let i = 0, chars = 0; chars < PARENT_TOKENS * 4; i++) {
    const call = {
      id: `call_${i}`,
      name: "bash",
      arguments: JSON.stringify({ command: `grep -rn export src/module-${i}` }),
    };
    const assistant = await appendEvent(db, rootId, "assistant", `Looking at module ${i}.`, {
      tool_calls: [call],
    });
    const result = JSON.stringify({ exit_code: 0, output: output(i) });
    await appendEvent(db, rootId, "tool_result", result, { tool_call_id: call.id, name: "bash" });
    chars += assistant.content.length + call.arguments.length + result.length + 120;
  }
}

/** The response that forks CHILDREN inherited children, and the children. */
async function forkChildren(db: Db, root: AgentRow): Promise<AgentRow[]> {
  const calls = Array.from({ length: CHILDREN }, (_, i) => ({
    id: `call_fork_${i}`,
    name: "fork",
    arguments: JSON.stringify({ name: `part-${i}`, prompt: `Describe module ${i} in two lines.` }),
  }));
  const answer = await appendEvent(db, root.id, "assistant", "", { tool_calls: calls });
  const forks = calls.map((call, i) =>
    checkedFork(
      root.id,
      {
        name: `part-${i}`,
        prompt: `Describe module ${i} in two lines.`,
        context: "inherit",
        inheritUntilEvent: answer.id,
      },
      { key: `fork:${call.id}`, epoch: 0, toolCallId: call.id },
    ),
  );
  const limits = { ...DEFAULT_LIMITS, maxChildren: CHILDREN, maxAgentsPerTree: CHILDREN + 1 };
  const rows = await runForks(db, root.id, {}, limits, forks);
  return Promise.all(
    rows.map(async (r) => {
      const made = JSON.parse(r.result_text ?? "{}") as { agent_id?: string };
      const child = made.agent_id ? await getAgent(db, made.agent_id) : undefined;
      if (!child) throw new Error(`fork-prefix: a fork was refused: ${r.result_text}`);
      return child;
    }),
  );
}

/** A child's first request as forks built it before issue 31 (commit 4bde4ac's context.ts). */
async function oldShape(db: Db, child: AgentRow, parent: AgentRow): Promise<ChatMessage[]> {
  const above = repairToolPairs(
    (await conversation(db, parent, { before: child.context_parent_event! })).map((e) => e.message),
  );
  const task = (await conversation(db, child)).at(-1)!.message;
  const prompt =
    typeof task.content === "string" ? task.content.replace(/^[^]*\nYour task:\n/, "") : "";
  return [
    { role: "system", content: systemPrompt(child, parent) },
    quotedConversation(parent.name, child.name, above),
    { role: "user", content: taskText(prompt) },
  ];
}
