// `warren -p`: a new tree whose root gets PROMPT; returns when the root's turn has ended and no
// agent of the tree is running or waiting, with the root's last answer.
import { sql } from "drizzle-orm";
import { treeCost } from "../agents/cost.js";
import { createTree, listTree } from "../agents/tree.js";
import type { ApproveMode } from "../policy/policy.js";
import { createBus } from "../bus/bus.js";
import { agentChannel, CHILD_HINT } from "../bus/channels.js";
import { listenUrlFor, type Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { startRuntime } from "./pool.js";
import { withRetry } from "../db/retry.js";
import { outage, type WarningSink } from "../db/warning.js";
import { outputRepairText, rootOutputSchemaText } from "../llm/framing.js";
import { sendInput } from "../mail/input.js";
import { checkResult } from "../text/json-schema.js";

export interface PromptOptions {
  db: Db;
  url: string;
  config: Config;
  prompt: string;
  /** How the new tree answers `ask` (default: the config's, else "none": no one may be there). */
  approve?: ApproveMode;
  timeoutMs?: number;
  signal?: AbortSignal;
  onWarning?: WarningSink;
  /**
   * `--output-schema`: a JSON Schema (compiled once already) the root's final answer must match.
   * The root is told it; an answer that does not match is sent back once with the problems.
   */
  outputSchema?: Record<string, unknown>;
}

export interface PromptRun {
  treeId: string;
  agentId: string;
  text: string;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Of the input, served from the server's prompt cache (when it says). */
  cachedTokens: number;
  /** Of the output, spent reasoning (when the server says). */
  reasoningTokens: number;
  /** The whole tree's cost in USD (config `prices`); null when no agent's model has a price. */
  costUsd: number | null;
  error?: string;
  /** The tree's other agents whose last turn failed (their model requests failed for good). */
  failedAgents?: { agentId: string; name: string; error: string }[];
  timedOut?: boolean;
  /** With an output schema: the root's answer parsed, or why it does not match (after the repair). */
  result?: { ok: true; value: unknown } | { ok: false; error: string };
}

interface TreeStatus {
  root_state: string;
  busy: number;
}

async function treeStatus(db: Db, treeId: string): Promise<TreeStatus> {
  const rows = await db.execute<{ root_state: string; busy: number }>(sql`
    select (select state from agents where id = ${treeId}) as root_state,
           count(*) filter (where state in ('running', 'waiting'))::int as busy
      from agents where tree_id = ${treeId}`);
  return rows.rows[0]!;
}

export async function runPrompt(options: PromptOptions): Promise<PromptRun> {
  const { db, config } = options;
  // The database may go away for a moment (a restart): every read and write here is retried.
  const retry = <T>(fn: () => Promise<T>) =>
    withRetry(fn, { onRetry: (err) => options.onWarning?.(outage(err)) });
  const schema = options.outputSchema;
  const root = await retry(() =>
    createTree(db, {
      prompt: schema ? `${options.prompt}\n\n${rootOutputSchemaText(schema)}` : options.prompt,
      model: config.model.name ?? null,
      cwd: process.cwd(),
      budget: config.rootBudget,
      approve: options.approve ?? config.approve ?? "none",
    }),
  );
  const bus = await createBus(listenUrlFor(config, options.url), { onWarning: options.onWarning });
  const runtime = await startRuntime({
    url: options.url,
    config,
    treeId: root.id,
    onWarning: options.onWarning,
  });
  let timedOut = false;
  let checked: PromptRun["result"];
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const quiet = () =>
    settled(db, bus, root.id, deadline, options.signal, (err) => options.onWarning?.(outage(err)));
  try {
    timedOut = !(await quiet());
    if (schema && !timedOut) {
      const first = await retry(() => checkAnswer(db, root.id, schema));
      checked = first;
      if (first && !first.ok) {
        // Sent back once, as the person's message: the root repairs its answer in a new turn.
        // Not retried: a lost reply must not send it twice.
        await sendInput(db, root.id, outputRepairText(first.error));
        timedOut = !(await quiet());
        if (!timedOut) checked = await retry(() => checkAnswer(db, root.id, schema));
      }
    }
  } finally {
    await runtime.stop();
    if (timedOut) {
      const why = options.signal?.aborted
        ? "the headless run was stopped"
        : "the headless run timed out";
      await retry(() => stopTree(db, root.id, why));
    }
    await bus.close();
  }
  const run = await retry(() => summarise(db, root.id, timedOut));
  const tree = await retry(() => listTree(db, root.id, { includeReaped: true }));
  const costUsd = treeCost(tree, config.prices, config.model.name) ?? null;
  return { ...run, costUsd, ...(checked && !timedOut ? { result: checked } : {}) };
}

/**
 * The root's last answer against `schema`: parsed, or the problems (each bad field's path);
 * undefined when its turn ended in an error instead (that error is the run's).
 */
async function checkAnswer(
  db: Db,
  rootId: string,
  schema: Record<string, unknown>,
): Promise<PromptRun["result"]> {
  const rows = await db.execute<{ kind: string; content: string }>(sql`
    select kind, content from events
     where agent_id = ${rootId} and kind in ('assistant', 'error')
       and (kind = 'error' or content <> '')
     order by id desc limit 1`);
  const last = rows.rows[0];
  if (last?.kind === "error") return undefined;
  const check = checkResult(schema, last?.content ?? "");
  return check.ok ? check : { ok: false, error: check.error };
}

/** Resolves true once the tree is quiet, false on timeout or abort. */
async function settled(
  db: Db,
  bus: Awaited<ReturnType<typeof createBus>>,
  treeId: string,
  deadlineAt: number | undefined,
  signal: AbortSignal | undefined,
  onRetry: (err: unknown) => void,
): Promise<boolean> {
  const deadline = deadlineAt ?? Infinity;
  let wake: () => void = () => {};
  // The root's own changes; its children's (CHILD_HINT) are left to the poll below, as deeper
  // descendants' are.
  const unsubscribe = await bus.subscribe(agentChannel(treeId), (payload) => {
    if (payload !== CHILD_HINT) wake();
  });
  signal?.addEventListener("abort", () => wake());
  try {
    while (true) {
      const status = await withRetry(() => treeStatus(db, treeId), { signal, onRetry });
      if ((status.root_state === "idle" || status.root_state === "dead") && status.busy === 0) {
        return true;
      }
      if (signal?.aborted || Date.now() >= deadline) return false;
      // Children's state changes are on their own channels; a short poll covers them.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(250, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    unsubscribe();
  }
}

/** Leaves a timed-out tree idle (not half-running for the next process to resume). */
async function stopTree(db: Db, treeId: string, reason: string): Promise<void> {
  await db.execute(sql`
    with stopped as (
      update agents set state = 'idle', lease_owner = null, lease_expires_at = null
       where tree_id = ${treeId} and state in ('running', 'waiting')
      returning id
    )
    insert into events (agent_id, kind, content)
    select id, 'interrupted', ${reason} from stopped`);
}

async function summarise(
  db: Db,
  treeId: string,
  timedOut: boolean,
): Promise<Omit<PromptRun, "costUsd">> {
  const rows = await db.execute<{
    tool_calls: number;
    input_tokens: string;
    output_tokens: string;
    cached_tokens: string;
    reasoning_tokens: string;
    text: string | null;
    last_kind: string | null;
    last_content: string | null;
  }>(sql`
    select a.tool_calls, a.input_tokens, a.output_tokens, a.cached_tokens, a.reasoning_tokens,
           (select content from events where agent_id = a.id and kind = 'assistant'
                and content <> '' order by id desc limit 1) as text,
           l.kind as last_kind, l.content as last_content
      from agents a
      left join lateral (
        select kind, content from events
         where agent_id = a.id and kind in ('assistant', 'error') order by id desc limit 1
      ) l on true
     where a.id = ${treeId}`);
  const row = rows.rows[0]!;
  // A child that failed is named (its parent may have answered all the same).
  const failed = await db.execute<{ id: string; name: string; failure: string }>(sql`
    select id, name, failure from agents
     where tree_id = ${treeId} and id <> ${treeId} and state = 'idle' and failure is not null
     order by created_at`);
  const failedAgents = failed.rows.map((r) => ({ agentId: r.id, name: r.name, error: r.failure }));
  return {
    treeId,
    agentId: treeId,
    text: row.text ?? "",
    toolCalls: Number(row.tool_calls),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    cachedTokens: Number(row.cached_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    ...(row.last_kind === "error" ? { error: row.last_content ?? "error" } : {}),
    ...(failedAgents.length ? { failedAgents } : {}),
    ...(timedOut ? { timedOut } : {}),
  };
}
