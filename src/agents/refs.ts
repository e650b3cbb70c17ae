// Resolving an agent reference: full id, unique id prefix (≥ 4), unique name in the tree, or `parent`.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { isPool, preparedFor } from "../db/prepared.js";
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
  if (!isPool(q)) {
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
  const wanted = ref.trim();
  if (!wanted) throw new AgentError("INVALID_ARGS", "agent reference is empty");
  const problem = textProblem(wanted);
  if (problem) throw new AgentError("INVALID_ARGS", `agent reference ${problem}`);
  if (wanted === "parent") return resolveParent(q, scope);

  if (UUID.test(wanted)) {
    const row = await getAgent(q, wanted.toLowerCase());
    if (row && row.tree_id === scope.treeId) return row;
    throw new AgentError("UNKNOWN_AGENT", `no agent ${wanted} in this tree`);
  }
  if (PREFIX.test(wanted)) {
    const rows = await q
      .select()
      .from(agents)
      .where(
        and(
          eq(agents.tree_id, scope.treeId),
          sql`${agents.id}::text like ${wanted.toLowerCase() + "%"}`,
        ),
      )
      .limit(2);
    if (rows.length === 1) return rows[0]!;
    if (rows.length > 1) {
      throw new AgentError("UNKNOWN_AGENT", `agent id prefix "${wanted}" is ambiguous`);
    }
  }
  const named = await q
    .select()
    .from(agents)
    .where(
      and(eq(agents.tree_id, scope.treeId), eq(agents.name, wanted), isNull(agents.reaped_at)),
    );
  const living = named.filter((a) => a.state !== "dead");
  if (named.length === 1) return named[0]!;
  if (living.length === 1) return living[0]!;
  if (named.length > 1) {
    const ids = named.map((a) => a.id.slice(0, 8)).join(", ");
    throw new AgentError("UNKNOWN_AGENT", `name "${wanted}" is ambiguous (${ids}); use an id`);
  }
  throw new AgentError("UNKNOWN_AGENT", `no agent "${wanted}" in this tree`);
}

async function resolveParent(q: Queryable, scope: RefScope): Promise<AgentRow> {
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
  const parent = await getAgent(q, parentId);
  if (!parent) throw new AgentError("UNKNOWN_AGENT", "parent agent not found");
  return parent;
}
