// Least privilege in the database (SPEC §8, issue 28): a role with nothing but LOGIN borrows no
// rights from warren's functions. It makes temp tables named like warren's, each with a trigger
// that would make it superuser and hand it the agents and mail, then calls every function warren
// defines and every SECURITY DEFINER function in the database; it stays what it was.
// Migration 0021 is what holds: warren_feed_sync's pinned search_path (pg_temp last) and no
// warren function executable by PUBLIC.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

/** The tables warren's functions name: an attacker's temp table of each name comes first. */
const SHADOWED = ["feed_watchers", "agents", "events", "mail", "agent_streams"];

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  return client;
}

let admin: pg.Client;
let attacker: pg.Client;
const role = `warren_t_login_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  const { url } = database();
  admin = await connected(url);
  const password = randomBytes(12).toString("hex");
  // Nothing but LOGIN (and what PUBLIC has: CONNECT, TEMP, USAGE on public).
  await admin.query(`create role "${role}" login password '${password}'`);
  const asRole = new URL(url);
  asRole.username = role;
  asRole.password = password;
  attacker = await connected(asRole.toString());
});

afterAll(async () => {
  await attacker?.end();
  await admin.query(`drop owned by "${role}"`).catch(() => {});
  await admin.query(`drop role if exists "${role}"`);
  await admin.end();
});

interface Fn {
  oid: number;
  signature: string;
  args: string[];
  definer: boolean;
  config: string[] | null;
  trigger: boolean;
}

/** Every function warren's schema defines, and every SECURITY DEFINER one outside the catalogs. */
async function functions(): Promise<Fn[]> {
  const rows = await admin.query<Fn>(`
    select p.oid::int as oid, p.oid::regprocedure::text as signature,
           coalesce(array(select format_type(t, null) from unnest(p.proargtypes) t), '{}') as args,
           p.prosecdef as definer, p.proconfig as config,
           p.prorettype = 'trigger'::regtype as trigger
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where (n.nspname = current_schema() and p.proname like 'warren\\_%')
        or (p.prosecdef and n.nspname not in ('pg_catalog', 'information_schema'))
     order by 2`);
  return rows.rows;
}

async function privileges() {
  const rows = await admin.query<{ super: boolean; agents: boolean; mail: boolean }>(
    `select (select rolsuper from pg_roles where rolname = $1) as super,
            has_table_privilege($1, 'agents', 'select') as agents,
            has_table_privilege($1, 'mail', 'select') as mail`,
    [role],
  );
  return rows.rows[0]!;
}

describe("a role with only LOGIN", () => {
  it("stays unprivileged after the temp-table trick against every warren function", async () => {
    const all = await functions();
    expect(all.some((f) => f.signature === "warren_feed_sync()")).toBe(true);
    // The borrowed rights, if any function ran the trigger as its owner.
    await attacker.query(`
      create function pg_temp.borrow() returns trigger language plpgsql as $$
      begin
        execute format('alter role %I superuser', session_user);
        execute format('grant select on public.agents, public.mail to %I', session_user);
        return null;
      end $$`);
    // One name at a time: a function that finds several of its tables shadowed fails sooner,
    // and its failure would roll the borrowed rights back with it.
    const refused: string[] = [];
    for (const table of SHADOWED) {
      await attacker.query(`
        create temp table ${table} (id uuid, tree_id uuid, agent_id uuid, to_id uuid,
                                    expires_at timestamptz, streams uuid[], kind text)`);
      await attacker.query(`
        create trigger borrow after insert or update or delete or truncate on pg_temp.${table}
          for each statement execute function pg_temp.borrow()`);
      for (const fn of all.filter((f) => !f.trigger)) {
        const args = fn.args.map((t) => `null::${t}`).join(", ");
        const name = fn.signature.slice(0, fn.signature.indexOf("("));
        try {
          await attacker.query(`select ${name}(${args})`);
        } catch (err) {
          refused.push(`${fn.signature}: ${(err as Error).message}`);
        }
      }
      await attacker.query(`drop table pg_temp.${table}`);
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(await privileges()).toEqual({ super: false, agents: false, mail: false });
    await expect(attacker.query("select count(*) from public.agents")).rejects.toThrow(
      /permission denied/,
    );
    await expect(attacker.query("select count(*) from public.mail")).rejects.toThrow(
      /permission denied/,
    );
  });

  it("may execute no warren function, and a SECURITY DEFINER one pins search_path, pg_temp last", async () => {
    const all = await functions();
    const executable = await admin.query<{ signature: string }>(
      `select p.oid::regprocedure::text as signature from pg_proc p
        where p.oid = any($2::oid[]) and has_function_privilege($1, p.oid, 'EXECUTE')`,
      [role, all.map((f) => f.oid)],
    );
    expect(executable.rows.map((r) => r.signature)).toEqual([]);
    for (const fn of all.filter((f) => f.definer)) {
      const path = (fn.config ?? []).find((c) => c.startsWith("search_path="));
      expect(path, `${fn.signature} pins search_path`).toBeDefined();
      const schemas = path!
        .slice("search_path=".length)
        .split(",")
        .map((s) => s.trim());
      expect(schemas[0], fn.signature).toBe("pg_catalog");
      expect(schemas.at(-1), fn.signature).toBe("pg_temp");
    }
  });
});
