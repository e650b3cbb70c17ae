// Checkpoints of an agent's working directory before its turns (issue 43, SPEC §11): taken once
// per turn (the row is keyed by the event that started it), in the tree's repository with git
// into the agent's vault under warren's home (checkpoint-git.ts) or, outside a repository, in
// warren's home by content (checkpoint-store.ts).
import path from "node:path";
import { sql } from "drizzle-orm";
import { warrenHome } from "../paths.js";
import type { Queryable } from "../db/client.js";
import type { AgentRow } from "./agents.sql.js";
import type { CheckpointRow } from "./checkpoints.sql.js";
import { checkpointTree, openVault, type Vault } from "./checkpoint-git.js";
import { storedPaths, storeSnapshot } from "./checkpoint-store.js";
import { openRepository, RepositoryRefused, type Repository } from "./repository.js";
import { treeRepository } from "./tree.js";
import { repositoryRoot } from "../paths.js";

export const DEFAULT_CHECKPOINT_MAX_FILE_BYTES = 10 * 1024 * 1024;

export interface CheckpointOptions {
  maxFileBytes: number;
  env?: Record<string, string | undefined>;
}

/**
 * The agent's vault in `git`'s repository: its checkpoints' refs and objects, under warren's home
 * (which the sandbox hides), so no command of the agent's can delete them.
 */
export function vaultOf(
  git: Repository,
  agentId: string,
  env?: Record<string, string | undefined>,
): Promise<Vault> {
  const dir = path.join(warrenHome(env ?? process.env), "checkpoints", "git", agentId);
  return openVault(git, dir, agentId);
}

/** The directory an agent's files are in: its worktree when isolated, else its cwd. */
export function agentDir(agent: Pick<AgentRow, "worktree" | "cwd">): string {
  return agent.worktree?.path ?? agent.cwd ?? process.cwd();
}

/**
 * The repository warren's git may run in for `dir` (the tree's recorded one), or null when `dir`
 * is outside it: the checkpoint then goes to the store.
 */
export async function checkpointRepository(
  q: Queryable,
  agent: Pick<AgentRow, "id" | "tree_id" | "repository">,
  dir: string,
): Promise<Repository | null> {
  const recorded = await treeRepository(q, agent);
  if (recorded === null) return null;
  return openRepository(dir, recorded).catch((err: unknown) => {
    if (err instanceof RepositoryRefused) return null;
    throw err;
  });
}

type Row = Omit<CheckpointRow, "id" | "start_event" | "taken_at"> & {
  id: string;
  start_event: string;
  taken_at: string | Date;
};

function fromRow(r: Row): CheckpointRow {
  return {
    ...r,
    id: Number(r.id),
    start_event: Number(r.start_event),
    taken_at: new Date(r.taken_at),
  };
}

/** The agent's checkpoint of the turn started by `startEvent`, and the one before it. */
async function known(q: Queryable, agentId: string, startEvent: number) {
  const rows = await q.execute<Row>(sql`
    (select * from checkpoints where agent_id = ${agentId}::uuid and start_event = ${startEvent})
    union all
    (select * from checkpoints where agent_id = ${agentId}::uuid and start_event < ${startEvent}
      order by start_event desc limit 1)`);
  const all = rows.rows.map(fromRow);
  return {
    mine: all.find((r) => r.start_event === startEvent),
    previous: all.find((r) => r.start_event !== startEvent),
  };
}

/**
 * Takes the checkpoint of `agent`'s working directory before the turn that `startEvent` started,
 * once: a turn resumed after a crash finds its row. An unchanged directory shares the previous
 * checkpoint's commit (no new commit). The row is written only while `fence` holds the lease.
 * Returns the row; undefined: the lease is gone, or the directory is in a git repository other
 * than the tree's (warren's git does not run there).
 */
export async function takeCheckpoint(
  q: Queryable,
  agent: AgentRow,
  startEvent: number,
  options: CheckpointOptions,
  fence?: { epoch: number },
): Promise<CheckpointRow | undefined> {
  const dir = agentDir(agent);
  const [{ mine, previous }, git] = await Promise.all([
    known(q, agent.id, startEvent),
    checkpointRepository(q, agent, dir),
  ]);
  if (mine) return mine;
  if (!git && repositoryRoot(dir)) return undefined;
  let taken: {
    ref: string | null;
    commit: string | null;
    tree: string | null;
    key: string | null;
    skipped: string[];
    /** What changed since the previous checkpoint: the previous turn's files. */
    since: string[] | null;
    /** The vault's ref being written, awaited with the row. */
    pinned?: Promise<void>;
  };
  if (git) {
    const prevGit = previous?.commit_sha && previous.dir === dir ? previous : undefined;
    const vault = await vaultOf(git, agent.id, options.env);
    const snap = await checkpointTree(git, vault, options.maxFileBytes, {
      message: `warren checkpoint: ${agent.name} (${agent.id}) before the turn of event ${startEvent}`,
      ...(prevGit?.tree_sha
        ? { previous: { commit: prevGit.commit_sha!, tree: prevGit.tree_sha } }
        : {}),
      knownLarge: previous?.skipped ?? [],
    });
    taken =
      "unchanged" in snap
        ? { ...pick(prevGit!), key: null, skipped: snap.skipped, since: [] }
        : {
            ref: vault.ref,
            commit: snap.commit,
            tree: snap.tree,
            key: null,
            skipped: snap.skipped,
            since: snap.changed,
            pinned: snap.pinned,
          };
  } else {
    const snap = storeSnapshot(dir, options.maxFileBytes, options.env);
    let since: string[] | null = null;
    if (previous?.store_key && previous.dir === dir) {
      const before = storedPaths(previous.store_key, options.env);
      since = [...new Set([...before.keys(), ...snap.paths.keys()])]
        .filter((p) => before.get(p) !== snap.paths.get(p))
        .sort();
    }
    taken = { ref: null, commit: null, tree: null, key: snap.key, skipped: snap.skipped, since };
  }
  // One statement: the row (only under the turn's lease) and the previous turn's files.
  const [rows] = await Promise.all([
    q.execute<Row>(sql`
    with ins as (
      insert into checkpoints (agent_id, tree_id, start_event, dir, ref, commit_sha, tree_sha,
                               store_key, skipped)
      select ${agent.id}::uuid, ${agent.tree_id}::uuid, ${startEvent}, ${dir}, ${taken.ref},
             ${taken.commit}, ${taken.tree}, ${taken.key}, ${sql.param(taken.skipped)}::text[]
       where ${fence?.epoch ?? null}::bigint is null
          or exists (select 1 from agents where id = ${agent.id}::uuid
                        and lease_epoch = ${fence?.epoch ?? null}::bigint)
      on conflict (agent_id, start_event) do nothing
      returning *
    ), prev as (
      update checkpoints set files = ${taken.since === null ? null : sql.param(taken.since)}::text[]
       where id = ${previous?.id ?? null}::bigint and files is null
         and ${taken.since === null ? null : 1}::int is not null and exists (select 1 from ins)
    )
    select * from ins
    union all
    select * from checkpoints
     where agent_id = ${agent.id}::uuid and start_event = ${startEvent}
       and not exists (select 1 from ins)`),
    taken.pinned,
  ]);
  const row = rows.rows[0];
  return row ? fromRow(row) : undefined;
}

/** A checkpoint's git ids, for a row that shares them. */
const pick = (row: CheckpointRow) => ({ ref: row.ref, commit: row.commit_sha, tree: row.tree_sha });

/** The agent's checkpoints, oldest first. */
export async function checkpointsOf(q: Queryable, agentId: string): Promise<CheckpointRow[]> {
  const rows = await q.execute<Row>(
    sql`select * from checkpoints where agent_id = ${agentId}::uuid order by start_event`,
  );
  return rows.rows.map(fromRow);
}
