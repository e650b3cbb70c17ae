// What the search index costs a write: events appended one by one through appendEvent (as turns
// write them; a mix of 80-word answers and 10 % 600-word tool results) with events_search_idx,
// beside the same appends with the index dropped, in alternating rounds so load drift hits both.
import { sql } from "drizzle-orm";
import { appendEvent } from "../src/agents/events.js";
import { createTree } from "../src/agents/tree.js";
import { closeDb, createDb } from "../src/db/client.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { median, nowMs } from "./stats.js";

const PER_ROUND = 1000;
const ROUNDS = 3;

export async function searchInsert(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 1, applicationName: "warren-bench-search" });
  try {
    const agent = await createTree(db, { name: "writer" });
    const [definition] = (
      await db.execute<{ indexdef: string }>(
        sql`select indexdef from pg_indexes where indexname = 'events_search_idx'`,
      )
    ).rows;
    if (!definition) throw new Error("events_search_idx is missing: migrations not applied?");
    const vocabulary = Array.from(
      { length: 5000 },
      (_, i) => `w${((i * 2654435761) % 1e9).toString(36)}`,
    );
    const words = (n: number) =>
      Array.from(
        { length: n },
        () => vocabulary[Math.floor(Math.random() * vocabulary.length)],
      ).join(" ");
    const round = async () => {
      const started = nowMs();
      for (let i = 0; i < PER_ROUND && !signal.aborted; i++) {
        const tool = i % 10 === 0;
        await appendEvent(db, agent.id, tool ? "tool_result" : "assistant", words(tool ? 600 : 80));
      }
      return (nowMs() - started) / PER_ROUND;
    };
    const withIndex: number[] = [];
    const without: number[] = [];
    await round(); // warm-up
    for (let r = 0; r < ROUNDS && !signal.aborted; r++) {
      withIndex.push(await round());
      await db.execute(sql`drop index events_search_idx`);
      without.push(await round());
      await db.execute(sql.raw(definition.indexdef));
      log(
        `search-insert: round ${r + 1}: ${withIndex.at(-1)!.toFixed(3)} vs ${without.at(-1)!.toFixed(3)} ms`,
      );
    }
    return [
      row(
        "event append with the search index",
        median(withIndex),
        "ms",
        "event append without it",
        median(without),
      ),
    ];
  } finally {
    await closeDb(db);
  }
}
