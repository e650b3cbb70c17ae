// The edges of a turn: budgets checked before each model call, and at the end of a turn the
// pending mail taken in (the agent goes on) or, with none, the agent going idle — atomically,
// so mail sent at that moment either wakes the agent or is taken in, never stranded.
import { sql } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { agentChannel } from "../bus/channels.js";
import type { Db } from "../db/client.js";
import { runPrepared, type Prepared } from "../db/prepared.js";
import { LeaseLost, type Fence } from "../agents/errors.js";
import { eventKey } from "../agents/event-keys.js";
import { mailText, PERSON } from "../llm/framing.js";
import { formatUsd } from "../agents/cost.js";
import type { Spend } from "./spend.js";
import { linkRunToMail } from "../telemetry/spans.js";

/**
 * One clear line when a budget is exhausted. Turns are checked only as a new turn starts; the
 * `usd` budgets on what `spend` (spending()) found.
 */
export function budgetProblem(
  agent: AgentRow,
  startingTurn: boolean,
  spend: Spend = {},
): string | undefined {
  const b = agent.budget;
  const stop = "; the agent stops here and goes idle";
  if (startingTurn && b.turns !== undefined && agent.turns >= b.turns) {
    return `turn budget exhausted (${agent.turns} of ${b.turns} turns)${stop}`;
  }
  if (b.tool_calls !== undefined && agent.tool_calls >= b.tool_calls) {
    return `tool call budget exhausted (${agent.tool_calls} of ${b.tool_calls} calls)${stop}`;
  }
  const tokens = agent.input_tokens + agent.output_tokens;
  if (b.tokens !== undefined && tokens >= b.tokens) {
    return `token budget exhausted (${tokens} of ${b.tokens} tokens)${stop}`;
  }
  const seconds = (Date.now() - agent.created_at.getTime()) / 1000;
  if (b.wall_seconds !== undefined && seconds >= b.wall_seconds) {
    return `time budget exhausted (${Math.round(seconds)} of ${b.wall_seconds} s)${stop}`;
  }
  if (b.usd !== undefined && spend.agentUsd !== undefined && spend.agentUsd >= b.usd) {
    return `cost budget exhausted (${formatUsd(spend.agentUsd)} of ${formatUsd(b.usd)})${stop}`;
  }
  if (spend.tree && spend.tree.usd >= spend.tree.budgetUsd) {
    const { usd, budgetUsd } = spend.tree;
    return `tree cost budget exhausted (${formatUsd(usd)} of ${formatUsd(budgetUsd)} for the whole tree)${stop}`;
  }
  return undefined;
}

/** The text of a `mail_in` event, as the model reads it (framed so a body cannot forge a sender). */
export { mailText };

/**
 * Takes all pending mail into the transcript ("continue"), or goes idle ("idle"). In id order:
 * mail becomes `mail_in`, the person's queued input (kind 'input') a `user` event.
 */
export async function takePendingMail(
  db: Db,
  agent: AgentRow,
  /** The worker's lease: a worker that lost it takes nothing (LeaseLost). */
  fence?: Fence,
  /** An interrupt ends this turn: its request is cleared, so mail taken in runs a new turn. */
  options: { endInterrupt?: boolean } = {},
): Promise<"continue" | "idle"> {
  // The common case, no mail, in one round trip; with mail, the transaction below takes it in.
  const [end] = await runPrepared<{ outcome: "idle" | "pending" | "lost" }>(db, TURN_END, [
    agent.id,
    fence?.owner ?? null,
    fence?.epoch ?? null,
  ]);
  return settleTurnEnd(db, agent, end?.outcome ?? "idle", fence, options);
}

/**
 * What follows the first step of a turn's end (warren_turn_end, or the answer's statement that
 * ended the turn): idle; the lease gone (LeaseLost); or mail pending, taken in under the row lock.
 */
export async function settleTurnEnd(
  db: Db,
  agent: AgentRow,
  outcome: "idle" | "pending" | "lost",
  fence?: Fence,
  options: { endInterrupt?: boolean } = {},
): Promise<"continue" | "idle"> {
  if (outcome === "lost") throw new LeaseLost(agent.id);
  if (outcome !== "pending") return "idle";
  return takeMailIn(db, agent, fence, options);
}

/** Takes the pending mail in under the row lock, or goes idle if none is left to take. */
async function takeMailIn(
  db: Db,
  agent: AgentRow,
  fence: Fence | undefined,
  options: { endInterrupt?: boolean },
): Promise<"continue" | "idle"> {
  const epoch = fence?.epoch ?? null;
  let taken: PendingMail[] = [];
  const next = await db.transaction(async (tx) => {
    // The row lock orders this against a concurrent send's wake-up (which needs the same row).
    const [row] = await runPrepared<{ state: string; lease_owner: string | null; epoch: string }>(
      tx,
      LOCK_OWN_ROW,
      [agent.id],
    );
    if (fence && (row?.lease_owner !== fence.owner || Number(row.epoch) !== fence.epoch)) {
      throw new LeaseLost(agent.id);
    }
    if (row?.state === "dead") return "idle";
    // A statement of its own after the lock, so it sees mail committed while the lock waited.
    const [found] = await runPrepared<{ mail: PendingMail[] | null }>(tx, PENDING_OR_IDLE, [
      agent.id,
    ]);
    const pending = found?.mail ?? [];
    taken = pending;
    if (pending.length > 0) {
      for (const m of pending) {
        if (m.kind === "input") {
          // The person's queued input becomes their message, exactly as typed.
          await tx.execute(sql`
            with e as (
              insert into events (agent_id, kind, content, data, key, epoch)
              values (${agent.id}, 'user', ${m.body},
                      ${JSON.stringify({ input_id: Number(m.id) })}::jsonb,
                      ${eventKey.mail(Number(m.id))}, ${epoch})
              returning id)
            update mail set consumed_at = now(), consumed_by_event = (select id from e)
             where id = ${m.id}`);
          continue;
        }
        await tx.execute(sql`
          with e as (
            insert into events (agent_id, kind, content, data, key, epoch)
            values (${agent.id}, 'mail_in', ${mailText(m.from_name ?? PERSON, m.from_id, m.body)},
                    ${JSON.stringify(mailInData(m))}::jsonb,
                    ${eventKey.mail(Number(m.id))}, ${epoch})
            returning id)
          update mail set consumed_at = now(), consumed_by_event = (select id from e)
           where id = ${m.id}`);
      }
      if (options.endInterrupt) {
        await tx.execute(
          sql`update agents set interrupt_requested_at = null, activity = null, wait_status = null
               where id = ${agent.id}`,
        );
      }
      return "continue";
    }
    return "idle";
  });
  // The run that takes the mail in links to the spans that sent it (telemetry on).
  if (next === "continue") {
    linkRunToMail(
      agent,
      taken.map((m) => ({ id: Number(m.id), traceContext: m.trace_context })),
    );
  }
  return next;
}

/**
 * A `mail_in` event's data: who sent it and the raw body, then `final: true` for a child's final
 * answer (mail.final) and `result`, the body parsed under its output schema (mail.result): what
 * the TUI marks and draws it by.
 */
function mailInData(m: PendingMail): Record<string, unknown> {
  return {
    mail_id: Number(m.id),
    from: m.from_id,
    from_name: m.from_name ?? PERSON,
    message: m.body,
    ...(m.final ? { final: true } : {}),
    ...(m.result !== null ? { result: m.result } : {}),
  };
}

type PendingMail = {
  id: number;
  kind: string;
  from_id: string | null;
  from_name: string | null;
  body: string;
  /** A child's final answer (mail.final) and its parsed result (mail.result; null: none). */
  final: boolean;
  result: unknown;
  /** The sending span's traceparent (null: telemetry was off for the sender). */
  trace_context: string | null;
};

/**
 * The end of a turn when no mail is pending, in one call (migrations/0012_locked_one_trip.sql):
 * the row locked as LOCK_OWN_ROW, the lease checked, then in a command of its own (a snapshot
 * taken after the lock's wait) idle as PENDING_OR_IDLE, unless any mail is unconsumed: then
 * 'pending' and nothing changed. Its last argument is the prefix of agent channels.
 */
const TURN_END: Prepared = {
  name: "warren_turn_end",
  text: `select warren_turn_end($1::uuid, $2::text, $3::bigint, '${agentChannel("")}') as outcome`,
};

/** The row lock that orders a turn's end against a concurrent send's wake-up (send.ts). */
const LOCK_OWN_ROW: Prepared = {
  name: "warren_turn_end_lock",
  text: "select state, lease_owner, lease_epoch as epoch from agents where id = $1::uuid for update",
};

/**
 * The agent's pending mail, in id order, locked; with none, the end of the turn: idle, lease,
 * interrupt request, activity and wait status cleared, listeners told. A dead agent stays dead.
 * Only after LOCK_OWN_ROW: going idle without looking for mail under that lock could strand mail
 * sent at that moment.
 */
const PENDING_OR_IDLE: Prepared = {
  name: "warren_pending_or_idle",
  text: `with pending as (
      select m.id, m.kind, m.from_id, a.name as from_name, m.body, m.final, m.result,
             m.trace_context
        from mail m left join agents a on a.id = m.from_id
       where m.to_id = $1::uuid and m.consumed_at is null
       order by m.id
       for update of m skip locked
    ), u as (
      update agents set state = 'idle', lease_owner = null, lease_expires_at = null,
                        interrupt_requested_at = null, last_activity_at = now(),
                        activity = null, wait_status = null
       where id = $1::uuid and state <> 'dead' and not exists (select 1 from pending)
      returning id
    )
    select (select json_agg(p order by p.id) from pending p) as mail,
           (select count(*) from (select pg_notify('${agentChannel("")}' || id::text, 'state') from u) n)
             as told`,
};
