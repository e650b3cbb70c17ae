// The fault-injection proxy of test/support/pg-proxy.ts against a real Postgres: a dropped commit
// reply means the write is committed while the client got an error (what the fault tests rely on),
// message boundaries split across chunks are reassembled, and silence keeps bytes for resume().
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrationsFolder } from "../../src/db/migrate.js";
import { useTestDatabase } from "../support/db.js";
import {
  FUNCTION_READS,
  FUNCTION_INTERNAL,
  FUNCTION_WRITES,
  isWriteSql,
  PgMessageReader,
  startPgProxy,
  type PgProxy,
} from "../support/pg-proxy.js";

const database = useTestDatabase();
let proxy: PgProxy;
const clients: pg.Client[] = [];

beforeEach(async () => {
  const target = new URL(database().url);
  proxy = await startPgProxy(target.hostname, Number(target.port || 5432));
  await direct("create table if not exists proxied (id int primary key, note text)");
  await direct("truncate proxied");
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.end().catch(() => {});
  await proxy.close();
});

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {}); // a cut connection is the point of these tests
  clients.push(client);
  await client.connect();
  return client;
}

async function direct(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: database().url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

const rowsIn = async () =>
  (await direct("select id, note from proxied order by id")).rows as { id: number }[];

describe("the message reader", () => {
  it("reassembles messages split at every byte", () => {
    const message = (type: string, body: string) => {
      const payload = Buffer.from(body);
      const head = Buffer.alloc(5);
      head.write(type, 0);
      head.writeInt32BE(4 + payload.length, 1);
      return Buffer.concat([head, payload]);
    };
    const stream = Buffer.concat([message("C", "INSERT 0 1\0"), message("Z", "I")]);
    const reader = new PgMessageReader();
    const seen = [...stream].flatMap((byte) => reader.push(Buffer.from([byte])));
    expect(seen.map((m) => [m.type, m.body.toString()])).toEqual([
      ["C", "INSERT 0 1\0"],
      ["Z", "I"],
    ]);
  });

  it("knows a data-modifying CTE is a write and a row lock is not", () => {
    expect(isWriteSql("with e as (insert into events values (1) returning id) select 1")).toBe(
      true,
    );
    expect(isWriteSql('update "agents" set "state" = $1')).toBe(true);
    expect(isWriteSql("select * from mail for update skip locked")).toBe(false);
    expect(isWriteSql("delete from mail where id = 1")).toBe(true);
    expect(isWriteSql("select * from warren_fork_batch($1::uuid, $2::uuid)")).toBe(true);
    expect(isWriteSql("select * from warren_recent_events($1::uuid, $2::bigint, $3::int)")).toBe(
      false,
    );
  });

  it("knows what each function a client calls writes (the migrations' non-trigger functions)", () => {
    // In migration order; a function a later migration drops is not there any more.
    const sql = fs
      .readdirSync(migrationsFolder())
      .filter((file) => file.endsWith(".sql"))
      .sort()
      .map((file) => fs.readFileSync(path.join(migrationsFolder(), file), "utf8"))
      .join("\n");
    const called = new Set<string>();
    for (const m of sql.matchAll(
      /(CREATE (?:OR REPLACE )?|DROP )FUNCTION "(\w+)"\([^)]*\)(?:\s*RETURNS (\w+))?/gi,
    )) {
      if (m[1]!.toUpperCase().startsWith("DROP")) called.delete(m[2]!);
      else if (m[3]!.toLowerCase() !== "trigger") called.add(m[2]!);
    }
    expect(called).toEqual(
      new Set([...Object.keys(FUNCTION_WRITES), ...FUNCTION_READS, ...FUNCTION_INTERNAL]),
    );
  });
});

describe("a dropped commit reply", () => {
  it("an INSERT outside a transaction is committed while its client gets an error", async () => {
    const client = await connect(proxy.urlFor(database().url));
    proxy.dropCommits({ every: 1, max: 1 });
    await expect(client.query("insert into proxied values (1, 'lost reply')")).rejects.toThrow();
    expect(await rowsIn()).toEqual([{ id: 1, note: "lost reply" }]);
    expect(proxy.dropped().map((d) => d.statements)).toEqual([
      ["insert into proxied values (1, 'lost reply')"],
    ]);
  });

  it("a parameterised (extended protocol) write and a data-modifying CTE are dropped too", async () => {
    const client = await connect(proxy.urlFor(database().url));
    proxy.dropCommits({ every: 1 });
    await expect(
      client.query("insert into proxied values ($1, $2)", [2, "bound"]),
    ).rejects.toThrow();
    const second = await connect(proxy.urlFor(database().url));
    await expect(
      second.query({
        name: "cte_write",
        text: "with i as (insert into proxied values ($1, 'cte') returning id) select id from i",
        values: [3],
      }),
    ).rejects.toThrow();
    expect((await rowsIn()).map((r) => r.id)).toEqual([2, 3]);
    expect(proxy.dropped()).toHaveLength(2);
  });

  it("inside a transaction the COMMIT's reply is the one dropped; reads pass", async () => {
    const client = await connect(proxy.urlFor(database().url));
    proxy.dropCommits({ every: 1 });
    await client.query("begin");
    await client.query("insert into proxied values (4, 'in tx')");
    await client.query("select 1");
    await client.query("update proxied set note = 'in tx, updated' where id = 4");
    await expect(client.query("commit")).rejects.toThrow();
    expect(await rowsIn()).toEqual([{ id: 4, note: "in tx, updated" }]);
    expect(proxy.dropped().map((d) => d.statements)).toEqual([
      [
        "insert into proxied values (4, 'in tx')",
        "update proxied set note = 'in tx, updated' where id = 4",
      ],
    ]);
    // Reads and a rolled-back write are not commits.
    const other = await connect(proxy.urlFor(database().url));
    await other.query("select count(*) from proxied");
    await other.query("begin");
    await other.query("insert into proxied values (5, 'rolled back')");
    await other.query("rollback");
    await expect(other.query("insert into proxied values (4, 'dup')")).rejects.toThrow(/duplicate/);
    expect(await other.query("select 1 as one")).toMatchObject({ rows: [{ one: 1 }] });
    expect(proxy.commits()).toBe(1);
  });

  it("every Nth commit, at most K times", async () => {
    proxy.dropCommits({ every: 2, max: 2 });
    let failed = 0;
    let client = await connect(proxy.urlFor(database().url));
    for (let id = 10; id < 20; id++) {
      try {
        await client.query("insert into proxied values ($1, 'n')", [id]);
      } catch {
        failed++;
        client = await connect(proxy.urlFor(database().url));
      }
    }
    expect(failed).toBe(2);
    expect(await rowsIn()).toHaveLength(10);
    expect(proxy.commits()).toBe(10);
  });
  it("only the commits whose writes match the statement filter", async () => {
    proxy.dropCommits({ statement: /set note = 'target'/ });
    const client = await connect(proxy.urlFor(database().url));
    await client.query("insert into proxied values (30, 'other')");
    await client.query("begin");
    await client.query("insert into proxied values (31, 'other')");
    await client.query("update proxied set note = 'target' where id = 31");
    await expect(client.query("commit")).rejects.toThrow();
    expect((await rowsIn()).map((r) => r.id)).toEqual([30, 31]);
    expect(proxy.dropped()).toHaveLength(1);
  });
});

describe("silence", () => {
  it("keeps the connection open and delivers on resume", async () => {
    const client = await connect(proxy.urlFor(database().url));
    proxy.silence();
    let answered = false;
    const query = client.query("select 42 as n").then((r) => {
      answered = true;
      return r.rows;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    expect(proxy.open()).toBe(1);
    proxy.resume();
    expect(await query).toEqual([{ n: 42 }]);
  });

  it("can begin at a committed write, its reply kept until resume()", async () => {
    const client = await connect(proxy.urlFor(database().url));
    proxy.dropCommits({ statement: /values \(40,/, action: "silence" });
    let answered = false;
    const insert = client.query("insert into proxied values (40, 'held')").then(() => {
      answered = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    expect((await rowsIn()).map((r) => r.id)).toEqual([40]);
    expect(proxy.dropped()).toHaveLength(1);
    proxy.resume();
    await insert;
    expect(answered).toBe(true);
  });

  it("cut() ends every connection", async () => {
    const client = await connect(proxy.urlFor(database().url));
    proxy.cut();
    await expect(client.query("select 1")).rejects.toThrow();
    expect(proxy.open()).toBe(0);
  });
});
