// A skill's `allowed-tools` narrows like a profile and never widens (SPEC §9): while a skill is in
// use — from the response in which the model loads it with the `skill` tool, or for the turn a
// person runs it as `/name ARGS` — until the turn ends, a call none of its allowed-tools covers is
// refused, naming the skill. What its list covers still goes through the policy (gateCall): the
// list only ever takes tools away. "In use" is read from the turn's events (not kept in memory),
// so a turn resumed after a crash is narrowed as before.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import type { ToolCall } from "../llm/model.js";
import { rulesCover } from "../policy/policy.js";
import { skillRunIn } from "../skills/listing.js";
import { skillsFor, type Skill } from "../skills/skills.js";
import { fail, type ToolOutcome } from "../tools/tool.js";

/** The skill tool only reads a skill's own files: never refused by a skill's narrowing. */
const ALWAYS = new Set(["skill"]);

/** The names of the skills used in the agent's current turn (since its last answer or interrupt). */
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
      const name = skillRunIn(row.content);
      if (name) used.add(name);
      continue;
    }
    const calls = (row.data as { tool_calls?: ToolCall[] } | null)?.tool_calls ?? [];
    for (const call of calls) {
      const name = call.name === "skill" ? skillArgName(call.arguments) : undefined;
      if (name) used.add(name);
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

/**
 * Undefined: no skill in use narrows this call. Else the refusal naming the skill whose
 * allowed-tools leave it out. No query at all where no skill sets allowed-tools.
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
  const narrowing = skillsFor(cwd).skills.filter((s): s is Skill & { allowedTools: string[] } =>
    Array.isArray(s.allowedTools),
  );
  if (narrowing.length === 0) return undefined;
  const used = await skillsUsedThisTurn(db, agentId);
  for (const skill of narrowing) {
    if (!used.has(skill.name)) continue;
    if (await rulesCover(skill.allowedRules ?? [], tool, args, cwd)) continue;
    const listed = skill.allowedTools.join(", ") || "nothing";
    return fail(
      "NOT_ALLOWED",
      `${what} is refused: the skill "${skill.name}" is in use for this turn and its allowed-tools (${listed}) do not include it`,
    );
  }
  return undefined;
}
