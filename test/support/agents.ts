// Helpers for the agents/mail/bus tests: asserting AgentError codes, recording NOTIFYs, reading
// the listener's backend from pg_stat_activity.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect } from "vitest";
import { AgentError, type ErrorCode } from "../../src/agents/errors.js";
import { createBus, type Bus } from "../../src/bus/bus.js";
import type { Queryable } from "../../src/db/client.js";

/** Awaits `promise`, expects it to reject with an AgentError of `code`, and returns the error. */
export async function expectAgentError(
  promise: Promise<unknown>,
  code: ErrorCode,
): Promise<AgentError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, `expected an AgentError ${code}`).toBeInstanceOf(AgentError);
  expect((error as AgentError).code).toBe(code);
  return error as AgentError;
}

export interface Notification {
  channel: string;
  payload: string;
}

/** Subscribes to `channels` and collects every payload, in arrival order. */
export async function recordNotifications(bus: Bus, channels: string[]) {
  const received: Notification[] = [];
  const offs = await Promise.all(
    channels.map((channel) =>
      bus.subscribe(channel, (payload) => received.push({ channel, payload })),
    ),
  );
  return {
    received,
    payloads: (channel: string) =>
      received.filter((n) => n.channel === channel).map((n) => n.payload),
    stop: () => offs.forEach((off) => off()),
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The bus's LISTEN backend(s) on the current database: pid and the last statement it ran. */
export async function listenBackends(q: Queryable): Promise<{ pid: number; query: string }[]> {
  const result = await q.execute<{ pid: number; query: string }>(sql`
    select pid, query from pg_stat_activity
     where application_name = 'warren-listen' and datname = current_database()`);
  return result.rows;
}

/** A bus on this test file's database, opened before and closed after the file's tests. */
export function useBus(url: () => string): () => Bus {
  let bus: Bus | undefined;
  beforeAll(async () => {
    bus = await createBus(url());
  });
  afterAll(async () => {
    await bus?.close();
  });
  return () => bus!;
}
