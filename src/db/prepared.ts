// Named (prepared) statements for the hot paths: Postgres parses and plans them once per
// connection instead of on every call, which is most of the cost of a short statement.
import type { QueryResultRow } from "pg";
import type { Db } from "./client.js";

export interface Prepared {
  name: string;
  text: string;
}

export async function runPrepared<R extends QueryResultRow>(
  db: Db,
  statement: Prepared,
  values: unknown[],
): Promise<R[]> {
  const result = await db.$client.query<R>({ name: statement.name, text: statement.text, values });
  return result.rows;
}
