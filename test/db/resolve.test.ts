// Choosing the database URL and failing with one clear line when it cannot be reached.
import net from "node:net";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { closeDb } from "../../src/db/client.js";
import {
  connectChecked,
  DatabaseUnavailableError,
  maskUrl,
  openDatabase,
  resolveDatabaseUrl,
  warrenHome,
} from "../../src/db/resolve.js";
import { useTestDatabase } from "../support/db.js";

const empty = useTestDatabase({ empty: true });

/** A port that nothing listens on: bound, noted, released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("warrenHome", () => {
  it("prefers WARREN_HOME, then XDG_DATA_HOME, then ~/.local/share", () => {
    expect(warrenHome({ WARREN_HOME: "/w", XDG_DATA_HOME: "/x", HOME: "/h" })).toBe("/w");
    expect(warrenHome({ XDG_DATA_HOME: "/x", HOME: "/h" })).toBe(path.join("/x", "warren"));
    expect(warrenHome({ HOME: "/h" })).toBe(path.join("/h", ".local/share/warren"));
  });
});

describe("resolveDatabaseUrl", () => {
  it("uses DATABASE_URL as given", async () => {
    expect(await resolveDatabaseUrl({ DATABASE_URL: "postgres://a@b:1/c" })).toBe(
      "postgres://a@b:1/c",
    );
  });
});

describe("an unreachable DATABASE_URL", () => {
  it("gives DatabaseUnavailableError with one line and no password", async () => {
    const port = await closedPort();
    const url = `postgres://someone:s3cret-pw@127.0.0.1:${port}/warren`;
    const error = await connectChecked(url).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    const message = (error as Error).message;
    expect(message).toBe(
      `cannot reach the database at postgres://someone@127.0.0.1:${port}/warren (DATABASE_URL): connection refused`,
    );
    expect(message).not.toContain("s3cret");
  });

  it("fails openDatabase the same way", async () => {
    const port = await closedPort();
    const attempt = openDatabase({ DATABASE_URL: `postgres://u:pw@127.0.0.1:${port}/db` });
    await expect(attempt).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(attempt).rejects.toThrow(
      /^cannot reach the database at postgres:\/\/u@127\.0\.0\.1:\d+\/db \(DATABASE_URL\): connection refused$/,
    );
  });

  it("masks passwords in URLs", () => {
    expect(maskUrl("postgres://u:p@h:5/d?password=x")).toBe("postgres://u@h:5/d");
    expect(maskUrl("not a url")).toBe("(unparsable URL)");
  });
});

describe("openDatabase", () => {
  it("migrates the database at DATABASE_URL and opens it", async () => {
    const { url, db } = await openDatabase({ DATABASE_URL: empty().url });
    try {
      expect(url).toBe(empty().url);
      const rows = await db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM agents`);
      expect(rows.rows[0]?.n).toBe(0);
    } finally {
      await closeDb(db);
    }
  });
});
