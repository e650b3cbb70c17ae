// Asking the person about instruction and agent files that differ from what they accepted (SPEC
// §3: "Instruction files, skills and agent files changed by an agent reach no prompt until the
// person accepts the change"). Prompts already leave such a file out (config/accepted-files.ts);
// here each change becomes one approval request on the tree's root (kind `accept_change`, with
// a diff), answered like any other in the TUI or with `warren approve` / `warren deny`, and one
// warning line (stderr under `-p`). Nothing waits for the answer: the agents go on without the
// change, and an accepted one is in the next request's prompt.
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import {
  acceptAtStart,
  acceptRequested,
  changeArguments,
  contentHash,
  FILE_CHANGE_TOOL,
  type FileChange,
} from "../config/accepted-files.js";
import { agentFileSources, agentFilesIn } from "../config/agent-files.js";
import type { Config } from "../config/config.js";
import type { Queryable } from "../db/client.js";
import { notice, type WarningSink } from "../db/warning.js";
import { lineDiff } from "../text/line-diff.js";
import { repositoryRoot, warrenConfigDir } from "../paths.js";
import { instructionCandidates, instructionsFor } from "./instructions.js";

type Env = Record<string, string | undefined>;

/**
 * The person starts warren in `cwd`: where warren never recorded anything (the project, the
 * person's own agent folders), what is there now is accepted. Elsewhere changes are asked about.
 */
export function acceptFilesAtStart(cwd: string, env: Env = process.env): string | undefined {
  const project = repositoryRoot(cwd) ?? path.resolve(cwd);
  const sources = agentFileSources(cwd, env);
  // The config directory holds the global AGENTS.md and the person's agents/.
  const folders = [
    project,
    warrenConfigDir(env),
    ...sources.filter((s) => s.own).map((s) => s.dir),
  ];
  const files = [
    ...instructionCandidates(cwd, env),
    ...sources.flatMap((s) => agentFilesIn(s.dir)),
  ];
  try {
    acceptAtStart(folders, files, env);
    return undefined;
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return `cannot record the instruction and agent files accepted here (${why}): they are used as they are`;
  }
}

/** What a request of this tree knows of a change it asked about (per thread). */
const asked = new Map<string, "pending" | "allowed" | "denied">();

function callKey(change: FileChange): string {
  return `file:${contentHash(`${change.file}\0${change.sha256 ?? "absent"}`)}`;
}

function shownPath(file: string, env: Env): string {
  const home = env.HOME || os.homedir();
  return home && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file;
}

/** The request's text: which file, what happened to it, and the diff. */
export function describeChange(change: FileChange, env: Env = process.env): string {
  const what = change.kind === "instructions" ? "instruction file" : "agent file";
  const how = change.now === null ? "was deleted" : change.accepted === null ? "is new" : "changed";
  return [
    `${shownPath(change.file, env)} (${what}) ${how} since you accepted it; allow: prompts use it as it is now`,
    ...lineDiff(change.accepted, change.now),
  ].join("\n");
}

/**
 * The changes an agent's next prompt leaves out, each asked about once on its tree's root; an
 * answer given elsewhere (another process, another host) is taken into the store here too.
 */
export async function noticeFileChanges(
  q: Queryable,
  config: Config,
  agent: AgentRow,
  onWarning: WarningSink | undefined,
  env: Env = process.env,
): Promise<void> {
  const changes = [
    ...instructionsFor(agent.cwd ?? process.cwd(), env).changes,
    ...(config.agentFileChanges ?? []),
  ];
  for (const change of changes) {
    const key = callKey(change);
    const memo = `${agent.tree_id}:${key}`;
    const known = asked.get(memo);
    if (known === "denied" || known === "allowed") continue;
    const inserted = await q.execute<{ id: number }>(sql`
      insert into approvals (tree_id, agent_id, call_key, tool, subject, arguments, pattern)
      values (${agent.tree_id}, ${agent.tree_id}, ${key}, ${FILE_CHANGE_TOOL},
              ${describeChange(change, env)}, ${changeArguments(change)}, '')
      on conflict (agent_id, call_key) do nothing
      returning id`);
    const created = inserted.rows[0];
    if (created) {
      asked.set(memo, "pending");
      const id = Number(created.id);
      onWarning?.(
        notice(
          `${shownPath(change.file, env)} differs from what you accepted (an agent may have written it): ` +
            `left out of every prompt until you accept the change (approval ${id}: warren approve ${id})`,
        ),
      );
      continue;
    }
    const rows = await q.execute<{ status: string; arguments: string }>(sql`
      select status, arguments from approvals
       where agent_id = ${agent.tree_id} and call_key = ${key}`);
    const row = rows.rows[0];
    // Asked before, and an interrupt of the root withdrew it: open again.
    if (row?.status === "cancelled") {
      await q.execute(sql`
        update approvals set status = 'pending', answered_at = null
         where agent_id = ${agent.tree_id} and call_key = ${key} and status = 'cancelled'`);
    }
    if (!row) continue;
    if (row.status === "allowed") {
      acceptRequested(row.arguments, env);
      asked.set(memo, "allowed");
    } else if (row.status === "denied") asked.set(memo, "denied");
    else asked.set(memo, "pending");
  }
}
