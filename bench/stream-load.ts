// The load of the 1,000-agent TUI benchmark, in a process of its own as a worker's would be: every
// given agent streams a model answer through the real stream publisher (a chunk every 50 ms, ~20 a
// second, coalesced and written only for the agents a feed watches), and ends a "response" every
// couple of seconds (its tokens, tool calls and activity change: the feed's agent hints).
// Started with a JSON argument {url, treeId, agentIds}; prints "ready" on stdout, and on SIGINT
// prints the chunks offered per second, then exits.
import { sql } from "drizzle-orm";
import { closeDb, createDb } from "../src/db/client.js";
import { createStreamPublisher } from "../src/feed/publish.js";

const CHUNK_MS = 50;
const RESPONSE_MS = 2_000;

const { url, treeId, agentIds } = JSON.parse(process.argv[2] ?? "{}") as {
  url: string;
  treeId: string;
  agentIds: string[];
};
const db = createDb(url, { max: 8, applicationName: "warren-bench-stream-load" });
const publishers = agentIds.map((id) => createStreamPublisher(db, { id, tree_id: treeId }));
const startedAt = Date.now();
let chunks = 0;
let tick = 0;
// Responses end staggered: each tick, the agents whose turn it is (1/40th of them).
const ticksPerResponse = RESPONSE_MS / CHUNK_MS;
const timer = setInterval(() => {
  tick++;
  for (const publisher of publishers) publisher.onText(`chunk ${tick} of a long answer `);
  chunks += publishers.length;
  const ending = agentIds.filter((_, i) => i % ticksPerResponse === tick % ticksPerResponse);
  if (ending.length === 0) return;
  void db
    .execute(
      sql`update agents set output_tokens = output_tokens + 120, input_tokens = input_tokens + 900,
                            tool_calls = tool_calls + 1, last_activity_at = now(),
                            activity = ${`bash: step ${tick}`}
           where id = any(${sql.param(ending)}::uuid[])`,
    )
    .catch(() => undefined);
}, CHUNK_MS);

process.stdout.write("ready\n");
process.on("SIGINT", () => {
  clearInterval(timer);
  const seconds = (Date.now() - startedAt) / 1000;
  void Promise.all(publishers.map((p) => p.settle()))
    .then(() => closeDb(db))
    .finally(() => {
      process.stdout.write(`chunks/s ${(chunks / seconds).toFixed(0)}\n`);
      process.exit(0);
    });
});
