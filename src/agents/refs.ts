// Resolving an agent reference: full id, unique id prefix (≥ 4), unique name in the tree, or `parent`.
import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { isPool, namedStatements, preparedFor } from "../db/prepared.js";
import { agents, type AgentRow } from "./agents.sql.js";
import { AgentError } from "./errors.js";
import { textProblem } from "./text.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
const PREFIX = /^[0-9a-f-]{4,36}$/i;

export interface RefScope {
  treeId: string;
  /** The agent asking; needed for `parent`. */
  selfId?: string;
  /** Its parent's id when the caller knows it (an agent's own row): `parent` then costs one read. */
  parentId?: string | null;
}

/** Names shown to people: the agent's name plus the first 8 characters of its id. */
export function displayName(agent: Pick<AgentRow, "id" | "name">): string {
  return `${agent.name} ${agent.id.slice(0, 8)}`;
}

export async function getAgent(q: Queryable, id: string): Promise<AgentRow | undefined> {
  if (!UUID.test(id)) return undefined;
  if (!isPool(q) || !namedStatements(q)) {
    const [row] = await q.select().from(agents).where(eq(agents.id, id));
    return row;
  }
  const prepared = preparedFor(q, "agent", () =>
    q
      .select()
      .from(agents)
      .where(eq(agents.id, sql.placeholder("id")))
      .prepare("warren_agent"),
  );
  const [row] = await prepared.execute({ id });
  return row;
}

export async function resolveAgentRef(
  q: Queryable,
  scope: RefScope,
  ref: string,
): Promise<AgentRow> {
  return (await resolveAgentRefs(q, scope, [ref]))[0]!;
}

/** How one reference is looked for: each kind is one condition of the shared read. */
type Wanted =
  | { kind: "id"; id: string; ref: string }
  | { kind: "parent"; id: string }
  /** An id prefix first, then (none found) a name; `prefix` absent: a name only. */
  | { kind: "name"; name: string; prefix?: string };

/**
 * Resolves `refs` (a fan-in names every agent it waits for) with one read, each as
 * resolveAgentRef would alone: an invalid reference fails before anything is read, else the
 * first that resolves to no one (or to several) fails, in the order given.
 */
export async function resolveAgentRefs(
  q: Queryable,
  scope: RefScope,
  refs: string[],
): Promise<AgentRow[]> {
  const wanted: Wanted[] = [];
  for (const ref of refs) wanted.push(await wantedOf(q, scope, ref));
  // Nothing to look for: no read (and no condition, which would read every agent).
  if (wanted.length === 0) return [];
  const ids = wanted.flatMap((w) => (w.kind === "name" ? [] : [w.id]));
  const names = wanted.flatMap((w) => (w.kind === "name" ? [w.name] : []));
  const prefixes = wanted.flatMap((w) => (w.kind === "name" && w.prefix ? [w.prefix] : []));
  const inTree = or(
    names.length ? and(inArray(agents.name, names), isNull(agents.reaped_at)) : undefined,
    ...prefixes.map((p) => sql`${agents.id}::text like ${p + "%"}`),
  );
  const rows = await q
    .select()
    .from(agents)
    .where(
      or(
        ids.length ? inArray(agents.id, ids) : undefined,
        inTree ? and(eq(agents.tree_id, scope.treeId), inTree) : undefined,
      ),
    );
  return wanted.map((w) => pick(rows, scope, w));
}

async function wantedOf(q: Queryable, scope: RefScope, ref: string): Promise<Wanted> {
  const wanted = ref.trim();
  if (!wanted) throw new AgentError("INVALID_ARGS", "agent reference is empty");
  const problem = textProblem(wanted);
  if (problem) throw new AgentError("INVALID_ARGS", `agent reference ${problem}`);
  if (wanted === "parent") return { kind: "parent", id: await parentIdOf(q, scope) };
  if (UUID.test(wanted)) return { kind: "id", id: wanted.toLowerCase(), ref: wanted };
  return PREFIX.test(wanted)
    ? { kind: "name", name: wanted, prefix: wanted.toLowerCase() }
    : { kind: "name", name: wanted };
}

/** The agent `w` names among the rows read for all of them. */
function pick(rows: AgentRow[], scope: RefScope, w: Wanted): AgentRow {
  if (w.kind === "parent") {
    const parent = rows.find((a) => a.id === w.id);
    if (!parent) throw new AgentError("UNKNOWN_AGENT", "parent agent not found");
    return parent;
  }
  if (w.kind === "id") {
    const row = rows.find((a) => a.id === w.id);
    if (row && row.tree_id === scope.treeId) return row;
    throw new AgentError("UNKNOWN_AGENT", `no agent ${w.ref} in this tree`);
  }
  const mine = rows.filter((a) => a.tree_id === scope.treeId);
  if (w.prefix !== undefined) {
    const matches = mine.filter((a) => a.id.startsWith(w.prefix!));
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) {
      throw new AgentError("UNKNOWN_AGENT", `agent id prefix "${w.name}" is ambiguous`);
    }
  }
  const named = mine.filter((a) => a.name === w.name && a.reaped_at === null);
  const living = named.filter((a) => a.state !== "dead");
  if (named.length === 1) return named[0]!;
  if (living.length === 1) return living[0]!;
  if (named.length > 1) {
    const ids = named.map((a) => a.id.slice(0, 8)).join(", ");
    throw new AgentError("UNKNOWN_AGENT", `name "${w.name}" is ambiguous (${ids}); use an id`);
  }
  throw new AgentError("UNKNOWN_AGENT", `no agent "${w.name}" in this tree`);
}

/** The parent's id for `parent`: the scope's when it knows it, else read from the asking agent. */
async function parentIdOf(q: Queryable, scope: RefScope): Promise<string> {
  const parentId =
    scope.parentId !== undefined
      ? scope.parentId
      : scope.selfId
        ? (await getAgent(q, scope.selfId))?.parent_id
        : undefined;
  if (parentId === undefined) {
    throw new AgentError("UNKNOWN_AGENT", `"parent" needs an agent to be relative to`);
  }
  if (!parentId) throw new AgentError("UNKNOWN_AGENT", "the root agent has no parent");
  return parentId;
}
