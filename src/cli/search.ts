// `warren search TEXT`: every agent's transcript in a tree (dead and reaped ones included), one
// line per matching event — agent, time, the matching line — newest first, or as JSON.
import { searchTree, SEARCH_LIMIT, type SearchHit } from "../search/search.js";
import { parseCommand, TREE_OPTION, JSON_OPTION, UsageError, type RunCommand } from "./command.js";
import { jsonText, padEnd, shownName } from "../text/format.js";
import { requireTree, withDatabase } from "./scope.js";

export const runSearch: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommand("search", args, {
    ...TREE_OPTION,
    ...JSON_OPTION,
  });
  const text = positionals.join(" ").trim();
  if (!text) throw new UsageError("missing TEXT", "search");
  await withDatabase(io.env, async (db) => {
    const root = await requireTree(db, values.tree);
    const hits = await searchTree(db, root.id, text);
    if (values.json) {
      io.out(jsonText(hits, 2));
      return;
    }
    if (hits.length === 0) {
      io.out("no matches");
      return;
    }
    const who = hits.map((hit) => shownName({ id: hit.agent_id, name: hit.agent_name }));
    const width = Math.max(...who.map((name) => name.length));
    hits.forEach((hit, i) => {
      const when = io.color.dim(formatTime(hit));
      io.out(`${io.color.bold(padEnd(who[i]!, width))}  ${when}  ${hit.line}`);
    });
    if (hits.length === SEARCH_LIMIT) {
      io.out(
        io.color.dim(`(the newest ${SEARCH_LIMIT} matches; narrow the search for older ones)`),
      );
    }
  });
};

/** Local time, to the second: "2026-11-23 21:30:05". */
function formatTime(hit: SearchHit): string {
  const d = hit.created_at;
  const two = (n: number) => String(n).padStart(2, "0");
  return (
    `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
  );
}
