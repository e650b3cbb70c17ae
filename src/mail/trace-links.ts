// Where mail taken in came from, as OpenTelemetry sees it: the traceparent of each mail's sending
// span (mail.trace_context), read only when telemetry is on so the receiver's span can link to it.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";

export interface MailTrace {
  id: number;
  traceContext: string | null;
}

/** The sending spans of mails `ids` (those sent with telemetry off are left out). */
export async function mailTraces(db: Db, ids: number[]): Promise<MailTrace[]> {
  if (ids.length === 0) return [];
  const found = await db.execute<{ id: string; trace_context: string }>(sql`
    select id, trace_context from mail
     where id = any(${sql.param(ids)}::bigint[]) and trace_context is not null`);
  return found.rows.map((r) => ({ id: Number(r.id), traceContext: r.trace_context }));
}
