// A table's row from its `to_jsonb(…)`: for a statement that returns rows it wrote in a CTE (or
// rows of several tables at once) as JSON, mapped to what drizzle's own query would return.
import { getTableColumns, type Column, type Table } from "drizzle-orm";
import { derived } from "../derived.js";

/** A table's columns as [field, column] pairs, listed once per table: every row read maps them. */
const columnsOf = new WeakMap<Table, [string, Column][]>();

const columnList = (table: Table) =>
  derived(columnsOf, table, (t) => Object.entries(getTableColumns(t)));

/** Maps `json` (keyed by column name, as to_jsonb writes it) to the table's row type. */
export function rowFromJson<T extends Table>(
  table: T,
  json: Record<string, unknown>,
): T["$inferSelect"] {
  const row: Record<string, unknown> = {};
  for (const [field, column] of columnList(table)) {
    const value = json[column.name];
    // JSON has no timestamps: a timestamp column gets its ISO text, which Date parses.
    row[field] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T["$inferSelect"];
}
