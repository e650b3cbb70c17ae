// Column builders that every feature's table repeats: each instant warren stores carries its time
// zone, and a log-like table's id is a bigserial read as a number.
import { bigserial, timestamp } from "drizzle-orm/pg-core";

/** A `timestamptz` column. */
export const timestamptz = (name: string) => timestamp(name, { withTimezone: true });

/** `timestamptz not null default now()`. */
export const timestamptzNow = (name: string) => timestamptz(name).notNull().defaultNow();

/** `id bigserial primary key`, read as a number. */
export const serialId = () => bigserial("id", { mode: "number" }).primaryKey();
