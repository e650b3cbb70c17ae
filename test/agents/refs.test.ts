// Resolving agent references: full id, unique id prefix (≥ 4), unique name, `parent`, tree scope.
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { resolveAgentRef, resolveAgentRefs, type RefScope } from "../../src/agents/refs.js";
import { createTree, forkAgent, type ForkOptions } from "../../src/agents/tree.js";
import type { Db } from "../../src/db/client.js";
import { expectAgentError } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";

const database = useTestDatabase();

/** Fixed ids, so prefixes are deterministic: `uuid("abcd1111")` → abcd1111-0000-4000-8000-… */
const uuid = (head: string) => `${head}-0000-4000-8000-000000000000`;

/** Gives a fresh agent (no children yet) a chosen id, keeping its tree consistent. */
async function withId(db: Db, agent: AgentRow, id: string): Promise<AgentRow> {
  await db.execute(sql`
    update agents set id = ${id},
           tree_id = case when tree_id = ${agent.id} then ${id}::uuid else tree_id end
     where id = ${agent.id}`);
  return { ...agent, id, tree_id: agent.tree_id === agent.id ? id : agent.tree_id };
}

async function fork(db: Db, parent: AgentRow, options: ForkOptions, id: string) {
  return withId(db, await forkAgent(db, parent.id, options), id);
}

let db: Db;
let root: AgentRow, alpha: AgentRow, gamma: AgentRow, twin1: AgentRow, twin2: AgentRow;
let stranger: AgentRow, otherRoot: AgentRow;
let scope: RefScope;

beforeAll(async () => {
  db = database().db;
  root = await withId(db, await createTree(db, { name: "root" }), uuid("0000aaaa"));
  alpha = await fork(db, root, { name: "alpha" }, uuid("1111aaaa"));
  gamma = await fork(db, alpha, { name: "gamma" }, uuid("2222aaaa"));
  twin1 = await fork(db, root, { name: "twin" }, uuid("abcd1111"));
  // Names are unique among living siblings only: a cousin may share one.
  twin2 = await fork(db, alpha, { name: "twin" }, uuid("abcd2222"));
  otherRoot = await withId(db, await createTree(db, { name: "root" }), uuid("3333aaaa"));
  stranger = await fork(db, otherRoot, { name: "omega" }, uuid("abcd3333"));
  await fork(db, otherRoot, { name: "alpha" }, uuid("4444aaaa"));
  scope = { treeId: root.id };
});

const resolve = (ref: string, selfId?: string) => resolveAgentRef(db, { ...scope, selfId }, ref);

describe("resolveAgentRef", () => {
  it("accepts a full id, in any case", async () => {
    expect((await resolve(gamma.id)).id).toBe(gamma.id);
    expect((await resolve(gamma.id.toUpperCase())).id).toBe(gamma.id);
  });

  it("accepts a unique id prefix of four or more characters", async () => {
    expect((await resolve("1111")).id).toBe(alpha.id);
    expect((await resolve("1111aaaa")).id).toBe(alpha.id);
    expect((await resolve("abcd1")).id).toBe(twin1.id);
    expect((await resolve("ABCD2222-0")).id).toBe(twin2.id);
  });

  it("rejects an ambiguous prefix with UNKNOWN_AGENT", async () => {
    const error = await expectAgentError(resolve("abcd"), "UNKNOWN_AGENT");
    expect(error.message).toMatch(/ambiguous/);
  });

  it("does not take a three-character prefix", async () => {
    await expectAgentError(resolve("111"), "UNKNOWN_AGENT");
    await expectAgentError(resolve("222"), "UNKNOWN_AGENT");
  });

  it("accepts a name unique in the tree, trimmed", async () => {
    expect((await resolve("gamma")).id).toBe(gamma.id);
    expect((await resolve("  alpha ")).id).toBe(alpha.id);
  });

  it("rejects an ambiguous name with UNKNOWN_AGENT naming the candidates", async () => {
    const error = await expectAgentError(resolve("twin"), "UNKNOWN_AGENT");
    expect(error.message).toMatch(/ambiguous/);
    expect(error.message).toContain("abcd1111");
    expect(error.message).toContain("abcd2222");
  });

  it("resolves `parent` relative to the asking agent", async () => {
    expect((await resolve("parent", gamma.id)).id).toBe(alpha.id);
    expect((await resolve("parent", alpha.id)).id).toBe(root.id);
  });

  it("the root has no parent, and `parent` needs an asking agent", async () => {
    await expectAgentError(resolve("parent", root.id), "UNKNOWN_AGENT");
    await expectAgentError(resolve("parent"), "UNKNOWN_AGENT");
  });

  it("never resolves an agent of another tree", async () => {
    await expectAgentError(resolve(stranger.id), "UNKNOWN_AGENT");
    await expectAgentError(resolve(otherRoot.id), "UNKNOWN_AGENT");
    await expectAgentError(resolve("abcd3333"), "UNKNOWN_AGENT");
    await expectAgentError(resolve("3333"), "UNKNOWN_AGENT");
    await expectAgentError(resolve("omega"), "UNKNOWN_AGENT");
    // "alpha" exists in both trees: each tree sees its own.
    expect((await resolve("alpha")).id).toBe(alpha.id);
  });

  it("rejects an empty reference with INVALID_ARGS and an unknown one with UNKNOWN_AGENT", async () => {
    await expectAgentError(resolve("  "), "INVALID_ARGS");
    await expectAgentError(resolve("nobody"), "UNKNOWN_AGENT");
    await expectAgentError(resolve(uuid("99999999")), "UNKNOWN_AGENT");
  });
});

describe("resolveAgentRefs", () => {
  it("resolves ids, prefixes, names and `parent` together in one read, as one by one", async () => {
    const refs = [gamma.id.toUpperCase(), "1111", "  gamma ", "parent", "abcd2222-0", "root"];
    const counted = countingStatements(db);
    // The asking agent's own row gives its parent's id, as the wait tool's scope does.
    const asking = { ...scope, selfId: gamma.id, parentId: gamma.parent_id };
    const together = await resolveAgentRefs(counted.db, asking, refs);
    expect(counted.statements()).toBe(1);
    const alone = await Promise.all(refs.map((ref) => resolve(ref, gamma.id)));
    expect(together.map((a) => a.id)).toEqual(alone.map((a) => a.id));
    expect(together.map((a) => a.name)).toEqual([
      "gamma",
      "alpha",
      "gamma",
      "alpha",
      "twin",
      "root",
    ]);
  });

  it("fails on an invalid reference before reading, else on the first one not found", async () => {
    const counted = countingStatements(db);
    await expectAgentError(resolveAgentRefs(counted.db, scope, ["omega", " "]), "INVALID_ARGS");
    expect(counted.statements()).toBe(0);
    const error = await expectAgentError(
      resolveAgentRefs(db, scope, ["alpha", stranger.id, "twin", "nobody"]),
      "UNKNOWN_AGENT",
    );
    expect(error.message).toContain(stranger.id);
    expect(await resolveAgentRefs(db, scope, [])).toEqual([]);
  });
});

/** `db`, counting the statements sent through it. */
function countingStatements(db: Db): { db: Db; statements(): number } {
  let n = 0;
  const session = (db as unknown as { session: { client: Db["$client"] } }).session;
  const client = new Proxy(session.client, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
      return (...args: Parameters<Db["$client"]["query"]>) => {
        n++;
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  const counted = new Proxy(session, {
    get: (target, prop, receiver) =>
      prop === "client" ? client : (Reflect.get(target, prop, receiver) as unknown),
  });
  return {
    db: new Proxy(db, {
      get: (target, prop, receiver) =>
        prop === "session" ? counted : (Reflect.get(target, prop, receiver) as unknown),
    }),
    statements: () => n,
  };
}
