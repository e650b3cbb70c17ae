// The verdict of a soak run (bench/soak.ts): nothing lost or doubled, memory and connections flat.
import type pg from "pg";

export interface Sample {
  /** Seconds since the soak began. */
  seconds: number;
  /** Mail consumed in the window, and per second. */
  mails: number;
  mailsPerSecond: number;
  /** Send→wake latency (mail created → consumed), milliseconds. */
  p50: number;
  p95: number;
  max: number;
  /** Resident memory of all worker processes together. */
  rssMb: number;
  /** The workers' database connections (LISTEN included). */
  connections: number;
}

export interface SoakCheck {
  tokens: number;
  samples: Sample[];
  /** Whether every mail was consumed and every agent idle after the soak. */
  drained: boolean;
}

/** Last third vs first third: RSS mean within this factor, connections' max within +2. */
const RSS_MARGIN = 1.3;
const CONNECTION_MARGIN = 2;

export async function checkSoak(
  probe: pg.Client,
  check: SoakCheck,
): Promise<{ ok: boolean; lines: string[] }> {
  const failures: string[] = [];
  const lines: string[] = [];
  if (!check.drained)
    failures.push("mail still unconsumed or agents still busy 120 s after the soak");

  // Each token travelled hop 0, 1, 2, … : every hop exists once (nothing doubled), no hop is
  // missing (nothing lost), and every mail was consumed once (consumed_by_event set).
  const rows = await probe.query<{
    token: number;
    hops: number;
    distinct_hops: number;
    top: number;
    unconsumed: number;
  }>(
    `select substring(body from 'token (\\d+) hop')::int as token, count(*)::int as hops,
            count(distinct substring(body from 'hop (\\d+)'))::int as distinct_hops,
            max(substring(body from 'hop (\\d+)')::int) as top,
            count(*) filter (where consumed_at is null or consumed_by_event is null)::int as unconsumed
       from mail group by 1 order by 1`,
  );
  const total = rows.rows.reduce((sum, r) => sum + r.hops, 0);
  if (rows.rows.length !== check.tokens) {
    failures.push(`${rows.rows.length} tokens found in the mail, ${check.tokens} sent`);
  }
  for (const r of rows.rows) {
    if (r.hops !== r.distinct_hops)
      failures.push(`token ${r.token}: ${r.hops - r.distinct_hops} hops doubled`);
    if (r.distinct_hops !== r.top + 1)
      failures.push(`token ${r.token}: ${r.top + 1 - r.distinct_hops} hops missing`);
    if (r.unconsumed > 0) failures.push(`token ${r.token}: ${r.unconsumed} mails not consumed`);
  }
  const consumers = await probe.query<{ shared: number; errors: number }>(
    `select (select count(*)::int from (select consumed_by_event from mail where consumed_by_event is not null
              group by 1 having count(*) > 1) d) as shared,
            (select count(*)::int from events where kind = 'error') as errors`,
  );
  if (consumers.rows[0]!.shared > 0)
    failures.push(`${consumers.rows[0]!.shared} events consumed more than one mail`);
  if (consumers.rows[0]!.errors > 0) failures.push(`${consumers.rows[0]!.errors} error events`);
  lines.push(
    `mail: ${total} delivered over ${rows.rows.length} tokens, each hop once, all consumed: ${failures.length === 0 ? "yes" : "NO"}`,
  );

  const third = Math.floor(check.samples.length / 3);
  if (third < 1) {
    failures.push(`${check.samples.length} samples are too few to compare thirds (run longer)`);
  } else {
    const first = check.samples.slice(0, third);
    const last = check.samples.slice(-third);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const rssFirst = mean(first.map((s) => s.rssMb));
    const rssLast = mean(last.map((s) => s.rssMb));
    const connFirst = Math.max(...first.map((s) => s.connections));
    const connLast = Math.max(...last.map((s) => s.connections));
    const p50First = mean(first.map((s) => s.p50).filter(Number.isFinite));
    const p50Last = mean(last.map((s) => s.p50).filter(Number.isFinite));
    lines.push(
      `RSS (all workers): ${rssFirst.toFixed(1)} MB first third, ${rssLast.toFixed(1)} MB last third (${(rssLast / rssFirst).toFixed(2)}×, limit ${RSS_MARGIN}×)`,
      `connections: max ${connFirst} first third, ${connLast} last third (limit +${CONNECTION_MARGIN})`,
      `send→wake p50: ${p50First.toFixed(1)} ms first third, ${p50Last.toFixed(1)} ms last third (${(p50Last / p50First).toFixed(2)}×, reported, not asserted)`,
    );
    if (rssLast > rssFirst * RSS_MARGIN)
      failures.push(`RSS grew ${(rssLast / rssFirst).toFixed(2)}×`);
    if (connLast > connFirst + CONNECTION_MARGIN)
      failures.push(`connections grew from ${connFirst} to ${connLast}`);
  }
  lines.push(failures.length === 0 ? "soak: OK" : `soak: FAILED\n  ${failures.join("\n  ")}`);
  return { ok: failures.length === 0, lines };
}
