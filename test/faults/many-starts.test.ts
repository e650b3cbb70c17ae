// 20 processes starting at once on an empty database (SPEC §1): migrations run once under the
// advisory lock, and every process starts cleanly.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/db/migrate.js";
import { createTestDatabase, type TestDatabase } from "../support/db.js";
import { runWarren, warrenEnv } from "../support/warren.js";

let database: TestDatabase;
let racing: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  racing = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await database?.drop();
  await racing?.drop();
});

async function appliedOnce(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const applied = await client.query<{ n: number; distinct_n: number }>(
      `select count(*)::int as n, count(distinct hash)::int as distinct_n
         from drizzle.__drizzle_migrations`,
    );
    expect(applied.rows[0]!.n).toBe(applied.rows[0]!.distinct_n);
    expect(applied.rows[0]!.n).toBeGreaterThan(0);
  } finally {
    await client.end();
  }
}

describe("many processes at once", () => {
  it("20 `warren ls` on an empty database: all succeed, each migration applied once", async () => {
    const env = warrenEnv({ databaseUrl: database.url });
    const runs = await Promise.all(Array.from({ length: 20 }, () => runWarren(["ls"], env)));
    for (const run of runs) {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe("there are no trees yet; run `warren` to start one");
    }
    await appliedOnce(database.url);
  });

  it("20 migrations racing in one instant: each applied once, none failing", async () => {
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => migrate(racing.url)));
    const failed = results.filter((r) => r.status === "rejected");
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    await appliedOnce(racing.url);
  });
});
