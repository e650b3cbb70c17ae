// Opening the database for one command, and finding the tree or agent a command-line argument names:
// trees by root id or unique prefix; agents within a tree, or by id / unique prefix across all trees.
import { and, isNull, sql } from "drizzle-orm";
import { agents, type AgentRow } from "../agents/agents.sql.js";
import { AgentError, isAgentError } from "../agents/errors.js";
import { getAgent, resolveAgentRef } from "../agents/refs.js";
import { latestRoot } from "../agents/tree.js";
import { closeDb, type Db } from "../db/client.js";
import { openDatabase } from "../db/resolve.js";
import { CliError, type Env } from "./command.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PREFIX = /^[0-9a-f-]{4,36}$/i;

/** Opens (and migrates) the database, runs `action`, and always closes the pool. */
export async function withDatabase<T>(
  env: Env,
  action: (db: Db, url: string) => Promise<T>,
): Promise<T> {
  const { db, url } = await openDatabase(env);
  try {
    return await action(db, url);
  } finally {
    await closeDb(db);
  }
}

/** The root of the tree `ref` names (full id or unique prefix of a root, or any agent's full id). */
export async function findTree(db: Db, ref: string): Promise<AgentRow> {
  const wanted = ref.trim().toLowerCase();
  if (!PREFIX.test(wanted)) {
    throw new CliError(
      `"${ref}" is not a tree id (a root's id or a prefix of at least 4 characters)`,
    );
  }
  const roots = await db
    .select()
    .from(agents)
    .where(and(isNull(agents.parent_id), sql`${agents.id}::text like ${wanted + "%"}`))
    .limit(2);
  if (roots.length > 1) throw new CliError(`tree id prefix "${ref}" is ambiguous`);
  if (roots[0]) return roots[0];
  if (UUID.test(wanted)) {
    // The full id of any agent stands for its tree.
    const agent = await getAgent(db, wanted);
    const root = agent && (await getAgent(db, agent.tree_id));
    if (root) return root;
  }
  throw new CliError(`no tree "${ref}"`);
}

/** The tree `ref` names, else the most recently active one; undefined only when there is none. */
export async function treeOrLatest(db: Db, ref: string | undefined): Promise<AgentRow | undefined> {
  return ref === undefined ? latestRoot(db) : findTree(db, ref);
}

export async function requireTree(db: Db, ref: string | undefined): Promise<AgentRow> {
  const root = await treeOrLatest(db, ref);
  if (!root) throw new CliError("there are no trees yet; run `warren` to start one");
  return root;
}

/**
 * An agent reference from the command line: resolved within `treeRef`'s tree when given; else
 * within the most recent tree, falling back to a full id or unique id prefix across all trees.
 */
export async function resolveAgent(
  db: Db,
  ref: string,
  treeRef: string | undefined,
): Promise<AgentRow> {
  if (treeRef !== undefined) {
    const root = await findTree(db, treeRef);
    return resolveAgentRef(db, { treeId: root.id }, ref);
  }
  let notInLatest: AgentError | undefined;
  const root = await latestRoot(db);
  if (root) {
    try {
      return await resolveAgentRef(db, { treeId: root.id }, ref);
    } catch (error) {
      if (!isAgentError(error) || error.code !== "UNKNOWN_AGENT") throw error;
      notInLatest = error;
    }
  }
  const wanted = ref.trim().toLowerCase();
  if (UUID.test(wanted)) {
    const agent = await getAgent(db, wanted);
    if (agent) return agent;
  } else if (PREFIX.test(wanted)) {
    const rows = await db
      .select()
      .from(agents)
      .where(sql`${agents.id}::text like ${wanted + "%"}`)
      .limit(2);
    if (rows.length > 1) {
      throw new AgentError("UNKNOWN_AGENT", `agent id prefix "${ref}" is ambiguous across trees`);
    }
    if (rows[0]) return rows[0];
  }
  throw notInLatest ?? new AgentError("UNKNOWN_AGENT", `no agent "${ref}"`);
}
