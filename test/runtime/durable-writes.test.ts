// Relaxed commits (DbOptions.relaxedCommits): the runtime's sessions commit without waiting for
// the WAL flush, except the writes whose loss to a server crash would do harm: a claim (its epoch
// would be handed out twice) and the result of a tool that acts outside the database (the
// command would run again). Watched on the wire: `warren -p` talks to Postgres through a proxy
// that records every statement, and each durable write carries DURABLE_COMMIT in its statement.
import { describe, expect, it } from "vitest";
import { DURABLE_COMMIT } from "../../src/db/client.js";
import { openServices } from "../../src/runtime/services.js";
import { loadConfig } from "../../src/config/config.js";
import { usePgProxy } from "../support/use-pg-proxy.js";
import { after, isFirst, useE2E } from "./e2e-support.js";

const e2e = useE2E();
const proxy = usePgProxy(() => e2e.db().$client.options.connectionString!);

const fold = (text: string) => text.replace(/\s+/g, " ").trim();
const durable = fold(DURABLE_COMMIT);

describe("relaxed commits", () => {
  it("the runtime's sessions commit asynchronously", async () => {
    const url = e2e.db().$client.options.connectionString!;
    const services = await openServices(url, loadConfig({}));
    try {
      const rows = await services.db.$client.query<{ synchronous_commit: string }>(
        "show synchronous_commit",
      );
      expect(rows.rows[0]!.synchronous_commit).toBe("off");
    } finally {
      await services.close();
    }
  });

  it("claims and the results of outside tools commit durably; a read's result does not", async () => {
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "bash", arguments: { command: "echo ran" } },
            { name: "glob", arguments: { pattern: "*.nothing-matches" } },
          ],
        },
      },
      { agent: "root", match: after("glob"), reply: { text: "done" } },
    ]);
    const url = e2e.db().$client.options.connectionString!;
    const run = await e2e.prompt("run a command and look around", {
      timeout: 30,
      env: { DATABASE_URL: proxy().urlFor(url) },
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const statements = [...proxy().traffic().byStatement.keys()];
    // byStatement keeps the first 160 characters; the durable part comes early in each.
    const results = statements.filter((s) => s.startsWith("with counted as"));
    expect(results.length).toBeGreaterThan(0);
    const durableResults = [...proxy().traffic().byStatement]
      .filter(([s]) => s.startsWith("with counted as") && s.includes(durable))
      .reduce((n, [, count]) => n + count, 0);
    const relaxedResults = [...proxy().traffic().byStatement]
      .filter(([s]) => s.startsWith("with counted as") && !s.includes(durable))
      .reduce((n, [, count]) => n + count, 0);
    expect({ durableResults, relaxedResults }).toEqual({ durableResults: 1, relaxedResults: 1 });

    const claims = statements.filter((s) => /^update agents set lease_owner/.test(s));
    expect(claims.length).toBeGreaterThan(0);
    for (const claim of claims) expect(claim).toContain(durable);
  });
});
