// Named statements run on the right connection: the pool's, or the open transaction's (where
// they see its uncommitted rows and roll back with it).
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runPrepared } from "../../src/db/prepared.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();
const db = () => database().db;

const BACKEND = { name: "test_backend_pid", text: "select pg_backend_pid() as pid" };
const NOTE = { name: "test_note_count", text: "select count(*)::int as n from prepared_note" };

describe("runPrepared", () => {
  it("runs inside a transaction on its connection, and on the pool outside one", async () => {
    await db().execute(sql`create table if not exists prepared_note (v int)`);
    await expect(
      db().transaction(async (tx) => {
        const [outer] = (await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`))
          .rows;
        const [inner] = await runPrepared<{ pid: number }>(tx, BACKEND, []);
        expect(inner!.pid).toBe(outer!.pid);
        await tx.execute(sql`insert into prepared_note values (1)`);
        const [seen] = await runPrepared<{ n: number }>(tx, NOTE, []);
        expect(seen!.n).toBe(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    const [after] = await runPrepared<{ n: number }>(db(), NOTE, []);
    expect(after!.n).toBe(0);
  });
});
