// The worktree half of `fork {isolation: "worktree"}` (issue 30): the child's id from the call's
// key, its worktree made (or, when an earlier attempt committed the fork, found) before the fork
// commits, in the tree's recorded repository only; undone when the database refuses the fork. See
// src/agents/worktree.ts.
import fs from "node:fs";
import { sql } from "drizzle-orm";
import type { WorktreeInfo } from "../agents/agents.sql.js";
import {
  childIdFor,
  createWorktree,
  planWorktree,
  removeWorktree,
  type CreateHooks,
} from "../agents/worktree.js";
import { treeRepository } from "../agents/tree.js";
import type { AgentToolContext } from "./agent-context.js";
import { resultStamp } from "./effects.js";

export interface Isolated {
  id: string;
  worktree: WorktreeInfo;
  /** Removes the worktree and branch again, unless the child's row owns them. */
  undo(): Promise<void>;
}

/** Steps a test can make fail, as a crash would stop there. */
export const worktreeTestHooks: CreateHooks = {};

async function rowExists(ctx: AgentToolContext, id: string): Promise<boolean> {
  const rows = await ctx.db.execute<{ one: number }>(
    sql`select 1 as one from agents where id = ${id}::uuid`,
  );
  return rows.rows.length > 0;
}

export async function isolatedFork(ctx: AgentToolContext, name: string): Promise<Isolated> {
  const id = childIdFor(ctx.agent.id, resultStamp(ctx).key);
  const plan = await planWorktree(ctx.cwd, name, id, await treeRepository(ctx.db, ctx.agent));
  // Whether the row owns the worktree matters only when its path exists (createWorktree reuses it
  // then): a first attempt, the common case, skips the query.
  const owned = fs.existsSync(plan.path) && (await rowExists(ctx, id));
  const worktree = await createWorktree(plan, owned, worktreeTestHooks);
  return {
    id,
    worktree,
    async undo() {
      if (await rowExists(ctx, id).catch(() => true)) return;
      await removeWorktree(worktree).catch(() => undefined);
    },
  };
}
