// A turn hears its agent killed or interrupted on `warren_stop`, which each scheduler LISTENs
// once (scheduler.ts), not on a channel of its own LISTENed and UNLISTENed around every turn.
// Watched on the wire: `warren -p` with one worker thread talks to Postgres through a proxy that
// records every statement, its LISTEN connection's included.
import { describe, expect, it } from "vitest";
import { agentChannel, STOP_CHANNEL } from "../../src/bus/channels.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { after, agentNamed, isFirst, useE2E } from "./e2e-support.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);

/** LISTENs of `channel` sent so far (pg-listen quotes a name only when it must). */
const listens = (channel: string) =>
  [...proxy().traffic().byStatement]
    .filter(([text]) => text === `LISTEN ${channel}` || text === `LISTEN "${channel}"`)
    .reduce((n, [, count]) => n + count, 0);

describe("the stop channel", () => {
  it("is LISTENed once by the scheduler; a turn LISTENs no channel of its own", async () => {
    // The root forks a child it does not wait for: no one else listens to the child's channel.
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "k", prompt: "say done", context: "fresh" } },
          ],
        },
      },
      { agent: "root", match: after("fork"), reply: { text: "started k" } },
      { agent: "k", match: isFirst, reply: { text: "done" } },
      // k's final text is its result, mailed to the root.
      { agent: "root", reply: { text: "k is done" } },
    ]);
    const url = e2e.db().$client.options.connectionString!;
    const run = await e2e.prompt("start k", {
      timeout: 30,
      env: { DATABASE_URL: proxy().urlFor(url), WARREN_WORKER_THREADS: "1" },
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const child = await agentNamed(e2e.db(), run.json!.tree_id, "k");
    expect(child.state).toBe("idle");
    expect(listens(STOP_CHANNEL)).toBe(1);
    expect(listens(agentChannel(child.id))).toBe(0);
  });
});
