// A skill's `allowed-tools` narrows like a profile and never widens (SPEC §9): while a skill is in
// use — from the response in which the model loads it with the `skill` tool, or for the turn a
// person runs it as `/name ARGS` — until the turn ends, a call none of its allowed-tools covers is
// refused, naming the skill. A command file's `allowed-tools` narrows the same way, for the turn a
// person runs it. What its list covers still goes through the policy (gateCall): the list only
// ever takes tools away. "In use" is read from the turn's events (not kept in memory), so a turn
// resumed after a crash is narrowed as before.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import type { ToolCall } from "../llm/model.js";
import { rulesCover } from "../policy/policy.js";
import { commandFilesFor } from "../skills/command-files.js";
import { runIn } from "../skills/listing.js";
import { skillsFor, type AllowedTools } from "../skills/skills.js";
import { fail, type ToolOutcome } from "../tools/tool.js";

/** The skill tool only reads a skill's own files: never refused by a skill's narrowing. */
const ALWAYS = new Set(["skill"]);

/** What narrows while in use: a skill, or a command file, named as it is in a refusal. */
interface Narrowing extends AllowedTools {
  /** `skill:git`, `command:review`: as skillsUsedThisTurn keys what the turn used. */
  key: string;
  shown: string;
}

/**
 * What is in use in the agent's current turn (since its last answer or interrupt), keyed
 * `skill:NAME` or `command:NAME`.
 */
async function skillsUsedThisTurn(db: Db, agentId: string): Promise<Set<string>> {
  const rows = await db.execute<{ kind: string; content: string; data: unknown }>(sql`
    select kind, content, data from events
     where agent_id = ${agentId}::uuid and kind in ('user', 'assistant')
       and id > coalesce((
         select max(id) from events
          where agent_id = ${agentId}::uuid
            and (kind in ('interrupted', 'killed')
                 or (kind = 'assistant'
                     and coalesce(jsonb_array_length(data -> 'tool_calls'), 0) = 0))), 0)
     order by id`);
  const used = new Set<string>();
  for (const row of rows.rows) {
    if (row.kind === "user") {
      const ran = runIn(row.content);
      if (ran) used.add(`${ran.kind}:${ran.name}`);
      continue;
    }
    const calls = (row.data as { tool_calls?: ToolCall[] } | null)?.tool_calls ?? [];
    for (const call of calls) {
      const name = call.name === "skill" ? skillArgName(call.arguments) : undefined;
      if (name) used.add(`skill:${name}`);
    }
  }
  return used;
}

/** The `name` of a skill call's raw arguments (the model's JSON text), if it has one. */
function skillArgName(raw: string): string | undefined {
  try {
    const name = (JSON.parse(raw) as { name?: unknown } | null)?.name;
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The skills and command files whose `allowed-tools` narrow while in use, for `cwd`. */
function narrowingFor(cwd: string): Narrowing[] {
  const of = (kind: "skill" | "command", name: string, found: Partial<AllowedTools>) =>
    found.allowedTools && found.allowedRules
      ? [
          {
            key: `${kind}:${name}`,
            shown: kind === "skill" ? `the skill "${name}"` : `the command "/${name}"`,
            allowedTools: found.allowedTools,
            allowedRules: found.allowedRules,
          },
        ]
      : [];
  return [
    ...skillsFor(cwd).skills.flatMap((s) => of("skill", s.name, s)),
    ...commandFilesFor(cwd).commands.flatMap((c) => of("command", c.name, c)),
  ];
}

/**
 * Undefined: no skill or command file in use narrows this call. Else the refusal naming the one
 * whose allowed-tools leave it out. No query at all where none sets allowed-tools.
 */
export async function skillRefusal(
  db: Db,
  agentId: string,
  cwd: string,
  tool: string,
  args: unknown,
  what: string,
): Promise<ToolOutcome | undefined> {
  if (ALWAYS.has(tool)) return undefined;
  const narrowing = narrowingFor(cwd);
  if (narrowing.length === 0) return undefined;
  const used = await skillsUsedThisTurn(db, agentId);
  for (const scope of narrowing) {
    if (!used.has(scope.key)) continue;
    if (await rulesCover(scope.allowedRules, tool, args, cwd)) continue;
    const listed = scope.allowedTools.join(", ") || "nothing";
    return fail(
      "NOT_ALLOWED",
      `${what} is refused: ${scope.shown} is in use for this turn and its allowed-tools (${listed}) do not include it`,
    );
  }
  return undefined;
}
