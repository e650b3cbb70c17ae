// The embedded server: started on demand in its own home, shared by later calls, stopped, and
// restarted with its data intact.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddedStatus, ensureEmbedded, stopEmbedded } from "../../src/db/embedded.js";

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

const serverStart = (url: string) =>
  query<{ started: Date; pid: number }>(
    url,
    "SELECT pg_postmaster_start_time() AS started, pg_backend_pid() AS pid",
  );

describe("embedded postgres", () => {
  let home: string;
  const notices: string[] = [];
  const options = { notice: (line: string) => notices.push(line) };

  beforeAll(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), "warren-embedded-test-"));
    await fs.chmod(home, 0o755);
  });

  afterAll(async () => {
    await stopEmbedded(home).catch(() => {});
    await fs.rm(home, { recursive: true, force: true });
  });

  it("is not initialised in an empty home", async () => {
    const status = await embeddedStatus(home);
    expect(status).toMatchObject({
      initialised: false,
      running: false,
      port: undefined,
      url: undefined,
    });
    expect(status.dataDir).toBe(path.join(home, "pgdata"));
    expect(await stopEmbedded(home)).toBe(false);
  });

  it("initialises and starts once when several callers race, then answers", async () => {
    const urls = await Promise.all([
      ensureEmbedded(home, options),
      ensureEmbedded(home, options),
      ensureEmbedded(home, options),
    ]);
    expect(new Set(urls).size).toBe(1);
    // One line says why the first start takes seconds; the callers that waited set up nothing.
    expect(notices.filter((line) => line.startsWith("first start: setting up"))).toEqual([
      `first start: setting up the embedded PostgreSQL in ${path.join(home, "pgdata")}…`,
    ]);
    const url = urls[0]!;
    expect(url).toMatch(/^postgres:\/\/warren:[0-9a-f]+@127\.0\.0\.1:\d+\/warren$/);
    expect(new URL(url).port).not.toBe("5432");
    const [row] = await query<{ one: number }>(url, "SELECT 1 AS one");
    expect(row?.one).toBe(1);

    const config = JSON.parse(await fs.readFile(path.join(home, "postgres.json"), "utf8"));
    expect(String(config.port)).toBe(new URL(url).port);
    expect((await fs.stat(path.join(home, "postgres.json"))).mode & 0o777).toBe(0o600);
  });

  it("reuses the running server on a second call", async () => {
    const first = await ensureEmbedded(home, options);
    const [before] = await serverStart(first);
    const second = await ensureEmbedded(home, options);
    expect(second).toBe(first);
    const [after] = await serverStart(second);
    expect(after?.started.getTime()).toBe(before?.started.getTime());
  });

  it("reports its status", async () => {
    const url = await ensureEmbedded(home, options);
    const status = await embeddedStatus(home);
    expect(status).toEqual({
      initialised: true,
      running: true,
      port: Number(new URL(url).port),
      dataDir: path.join(home, "pgdata"),
      logPath: path.join(home, "postgres.log"),
      url,
    });
  });

  it("stops, and starts again with its data kept", async () => {
    const url = await ensureEmbedded(home, options);
    await query(url, "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('still here')");

    expect(await stopEmbedded(home)).toBe(true);
    expect((await embeddedStatus(home)).running).toBe(false);
    await expect(query(url, "SELECT 1")).rejects.toThrow();
    expect(await stopEmbedded(home)).toBe(false);

    const again = await ensureEmbedded(home, options);
    expect(again).toBe(url);
    const rows = await query<{ note: string }>(again, "SELECT note FROM kept");
    expect(rows).toEqual([{ note: "still here" }]);
  });
});

describe.runIf(process.getuid?.() === 0)("embedded postgres run by root", () => {
  it("lets the postgres user traverse private ancestors, saying so once per directory", async () => {
    const outer = await fs.mkdtemp(path.join(os.tmpdir(), "warren-private-"));
    const home = path.join(outer, "inner", "home");
    await fs.mkdir(home, { recursive: true, mode: 0o700 });
    await fs.chmod(path.join(outer, "inner"), 0o700);
    const notices: string[] = [];
    try {
      const url = await ensureEmbedded(home, { notice: (line) => notices.push(line) });
      expect(url).toMatch(/^postgres:/);
      expect(notices).toEqual([
        expect.stringContaining(`search permission on ${outer} `),
        expect.stringContaining(`search permission on ${path.join(outer, "inner")} `),
        expect.stringContaining(`search permission on ${home} `),
        expect.stringMatching(/^first start: setting up the embedded PostgreSQL/),
      ]);
      const owner = (await fs.stat(path.join(home, "pgdata"))).uid;
      expect(owner).not.toBe(0);
    } finally {
      await stopEmbedded(home).catch(() => {});
      await fs.rm(outer, { recursive: true, force: true });
    }
  });
});
