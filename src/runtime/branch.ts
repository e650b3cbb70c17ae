// Branching a conversation from any point (issue 43, SPEC §11: `/fork --at N`, `warren fork AGENT
// --at N`): a new sibling of the agent (a child of its parent; a root's branch is its child, a
// tree having one root) whose conversation is the agent's before turn N, copied event by event,
// and, with a worktree, whose files are that turn's checkpoint in a git worktree of its own.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import type { AgentRow, WorktreeInfo } from "../agents/agents.sql.js";
import { childCapabilities } from "../agents/capabilities.js";
import { restoreTree } from "../agents/checkpoint-git.js";
import { agentDir, checkpointsOf, vaultOf } from "../agents/checkpoints.js";
import { getAgent } from "../agents/refs.js";
import { findTurn, RewindError } from "../agents/rewind.js";
import { forkAgent, treeRepository } from "../agents/tree.js";
import { sendMail } from "../mail/send.js";
import {
  createWorktree,
  planWorktree,
  removeWorktree,
  worktreeRepository,
} from "../agents/worktree.js";

export interface BranchOptions {
  name?: string;
  /** Its first message: it runs at once (else it waits, idle, for one). */
  prompt?: string;
  /** Files from the checkpoint before turn N, in a worktree of its own. */
  worktree?: boolean;
  maxFileBytes: number;
}

// The events a conversation is made of, copied in order (new ids, no keys: a key names the
// original's events). A summary stands for what it summarised: copied first, without its
// `through_event` (the original's id), then only what came after that.
const COPY = (from: string, to: string, before: number) => sql`
  with s as (
    select id, (data->>'through_event')::bigint as through from events
     where agent_id = ${from}::uuid and kind = 'summary' and rewound_at is null and id < ${before}
     order by id desc limit 1
  )
  insert into events (agent_id, kind, content, data, created_at)
  select ${to}::uuid, e.kind, e.content,
         case when e.kind = 'summary' then e.data - 'through_event' else e.data end, e.created_at
    from events e
   where e.agent_id = ${from}::uuid and e.rewound_at is null and e.id < ${before}
     and e.kind in ('user', 'mail_in', 'assistant', 'tool_call', 'tool_result', 'summary')
     and (not exists (select 1 from s)
          or e.id = (select id from s)
          or e.id > (select coalesce(through, id) from s))
   order by e.id = (select id from s) desc nulls last, e.id`;

/** Makes the branch of `agent` at its turn `n`; returns the new agent. */
export async function branchAgent(
  db: Db,
  config: Config,
  agent: AgentRow,
  n: number,
  options: BranchOptions,
): Promise<AgentRow> {
  const turn = await findTurn(db, agent.id, n);
  const parentId = agent.parent_id ?? agent.id;
  const parent = parentId === agent.id ? agent : await getAgent(db, parentId);
  if (!parent) throw new RewindError(`${agent.name}'s parent is gone`);
  const name = options.name ?? `${agent.name}-at${n}`;
  let isolated: { id: string; worktree: WorktreeInfo } | undefined;
  if (options.worktree) {
    const id = randomUUID();
    const plan = await planWorktree(agentDir(agent), name, id, await treeRepository(db, agent));
    const worktree = await createWorktree(plan, false);
    isolated = { id, worktree };
    try {
      const checkpoint = (await checkpointsOf(db, agent.id)).find(
        (c) => c.start_event >= turn.startEvent && c.commit_sha,
      );
      if (checkpoint?.commit_sha) {
        const git = await worktreeRepository(worktree, worktree.path);
        const vault = await vaultOf(git, checkpoint.agent_id);
        await restoreTree(git, vault, checkpoint.commit_sha, options.maxFileBytes);
      }
    } catch (err) {
      await removeWorktree(worktree).catch(() => undefined);
      throw err;
    }
  }
  const sibling = agent.parent_id !== null;
  try {
    const branch = await forkAgent(
      db,
      parentId,
      {
        name,
        // A sibling sees what the agent saw of their parent; a root's branch starts fresh.
        context: sibling && agent.context_mode === "inherit" ? "inherit" : "fresh",
        ...(sibling && agent.context_parent_event
          ? { inheritUntilEvent: agent.context_parent_event }
          : {}),
        systemPrompt: agent.system_prompt,
        model: agent.model,
        profile: agent.profile,
        ...childCapabilities(config, parent, {}),
        ...(isolated
          ? { id: isolated.id, worktree: isolated.worktree, cwd: isolated.worktree.path }
          : { cwd: agent.cwd }),
      },
      config.limits,
    );
    await db.execute(COPY(agent.id, branch.id, turn.startEvent));
    if (options.prompt) {
      await sendMail(db, {
        treeId: branch.tree_id,
        fromId: null,
        toId: branch.id,
        body: options.prompt,
        maxBytes: config.limits.maxMessageBytes,
      });
    }
    return (await getAgent(db, branch.id)) ?? branch;
  } catch (err) {
    if (isolated) await removeWorktree(isolated.worktree).catch(() => undefined);
    throw err;
  }
}
