// A new agent's name must not pass for another agent's of its tree (issue 38): a name that differs
// from one already in the tree (living or dead: its mail may still be read) only by invisible or
// look-alike characters is refused, so `tеsts` (Cyrillic е) cannot answer for `tests`. The same
// name again is not this rule's business (SPEC §2: unique among living siblings, checked by the
// fork itself). Read before the fork's statement, outside its lock: two forks racing from
// different parents of one tree could each pass (a known limit; the reserved names and invisible
// characters are refused in validateName, whatever races).
import { sql } from "drizzle-orm";
import type { Queryable } from "../db/client.js";
import { skeleton } from "../text/confusables.js";
import { visibleText } from "../text/escape.js";
import { AgentError } from "./errors.js";

/**
 * For each of `names` (forks of one parent, in order), the refusal when it can pass for another
 * agent's name in the parent's tree or for an earlier one of `names`; undefined when it is fine.
 */
export async function lookalikeRefusals(
  q: Queryable,
  parentId: string,
  names: readonly string[],
): Promise<(AgentError | undefined)[]> {
  const rows = await q.execute<{ name: string }>(sql`
    select distinct name from agents
     where tree_id = (select tree_id from agents where id = ${parentId})`);
  const bySkeleton = new Map<string, string>();
  for (const { name } of rows.rows) bySkeleton.set(skeleton(name), name);
  return names.map((name) => {
    const key = skeleton(name);
    const other = bySkeleton.get(key);
    if (other !== undefined && other !== name) {
      return new AgentError(
        "INVALID_ARGS",
        `name "${shown(name)}" can pass for "${shown(other)}", another agent's name in this tree ` +
          "(they differ only in invisible or look-alike characters); choose another",
      );
    }
    bySkeleton.set(key, name);
    return undefined;
  });
}

function shown(name: string): string {
  return visibleText(name).join("");
}
