// `warren search TEXT`: every agent's transcript in a tree (dead and reaped ones included), one
// line per matching event — agent, time, the matching line — newest first, or as JSON.
import { searchTree, SEARCH_LIMIT, type SearchHit } from "../search/search.js";
import { parseCommandArgs, UsageError, type Command } from "./command.js";
import { jsonText, padEnd, shownName } from "../text/format.js";
import { requireTree, withDatabase } from "./scope.js";

export const search: Command = {
  name: "search",
  summary: "search every agent's transcript in a tree",
  usage: `Usage: warren search TEXT [--tree ID] [--json]

Search every agent's transcript in a tree, dead ones included; newest first, at most
${SEARCH_LIMIT} events. Words are matched whole (full-text, any case; "a phrase", -word and
or work as in a web search); a query shorter than 3 characters or without letters or digits,
or one no word matches, is looked up as a plain substring. Several words may be given
unquoted.

Options:
  --tree ID   search this tree (a root's id or a unique prefix of it; default: the most recent)
  --json      print a JSON array of {agent_id, agent_name, event_id, kind, created_at, line}
  -h, --help  show this help`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs("search", {
      args,
      allowPositionals: true,
      options: {
        tree: { type: "string" },
        json: { type: "boolean", default: false },
      },
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
  },
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
