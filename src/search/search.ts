// Searching a tree's transcripts: every agent's events (dead and reaped agents included) through
// the full-text index events_search_idx, with a substring scan for what words cannot find.
import { sql } from "drizzle-orm";
import { searchedKind, searchVector, type EventKind } from "../agents/events.sql.js";
import type { Queryable } from "../db/client.js";
import { escapeLine } from "../text/escape.js";
import { SEARCH_LIMIT } from "./limit.js";

export { SEARCH_LIMIT };

export interface SearchHit {
  agent_id: string;
  agent_name: string;
  event_id: number;
  kind: EventKind;
  created_at: Date;
  /** The first matching line of the event's content: trimmed, escaped, at most LINE_MAX chars. */
  line: string;
}

export interface SearchOptions {
  /** At most this many hits, newest first (default SEARCH_LIMIT). */
  limit?: number;
}

export const LINE_MAX = 200;
/** Content read per hit, around the match: enough for its line, never a whole large result. */
const WINDOW = 4000;

/**
 * The tree's events matching `text`, newest first. Words go through the full-text index
 * (websearch syntax: "a phrase", -word, or); a query shorter than 3 characters or without word
 * characters, or one the index finds nothing for, is looked up as a plain substring instead.
 */
export async function searchTree(
  q: Queryable,
  treeId: string,
  text: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const query = text.trim();
  if (!query) return [];
  const limit = options.limit ?? SEARCH_LIMIT;
  if (wantsWords(query)) {
    const hits = await searchWords(q, treeId, query, limit);
    if (hits.length > 0) return hits;
  }
  return searchSubstring(q, treeId, query, limit);
}

/** Whether the full-text index can serve `query` (else only a substring scan can). */
export function wantsWords(query: string): boolean {
  return query.length >= 3 && /[\p{L}\p{N}]/u.test(query);
}

interface HitRow extends Record<string, unknown> {
  agent_id: string;
  agent_name: string;
  event_id: string | number;
  kind: EventKind;
  created_at: Date | string;
  excerpt: string;
}

async function searchWords(q: Queryable, treeId: string, query: string, limit: number) {
  // The expression and predicate are the index's own (events.sql.ts), so the planner can use it.
  const result = await q.execute<HitRow>(sql`
    select e.agent_id, a.name as agent_name, e.id as event_id, e.kind, e.created_at,
           left(e.content, ${WINDOW}) as excerpt
      from events e join agents a on a.id = e.agent_id
     where a.tree_id = ${treeId} and ${searchedKind}
       and ${searchVector} @@ websearch_to_tsquery('simple', ${query})
     order by e.id desc
     limit ${limit}`);
  return result.rows.map((row) => toHit(row, query));
}

async function searchSubstring(q: Queryable, treeId: string, query: string, limit: number) {
  const pattern = `%${query.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  // The excerpt starts a little before the match, so its line is there however long the content.
  const result = await q.execute<HitRow>(sql`
    select e.agent_id, a.name as agent_name, e.id as event_id, e.kind, e.created_at,
           substr(e.content, greatest(1, strpos(lower(e.content), lower(${query})) - ${WINDOW / 2}),
                  ${WINDOW}) as excerpt
      from events e join agents a on a.id = e.agent_id
     where a.tree_id = ${treeId} and ${searchedKind}
       and e.content ilike ${pattern}
     order by e.id desc
     limit ${limit}`);
  return result.rows.map((row) => toHit(row, query));
}

function toHit(row: HitRow, query: string): SearchHit {
  return {
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    event_id: Number(row.event_id),
    kind: row.kind,
    created_at: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
    line: matchingLine(row.excerpt, query),
  };
}

/**
 * The line of `content` that `query` matched: the first holding the whole query, else the first
 * holding one of its words (as a word, then anywhere), else the first non-blank line. Trimmed,
 * control characters escaped, and cut to LINE_MAX characters around the match.
 */
export function matchingLine(content: string, query: string): string {
  const lines = content.split(/\r?\n/);
  const lower = query.toLowerCase();
  const words = searchWordsOf(query);
  const wordRe = words.map(
    (w) => new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(w)}($|[^\\p{L}\\p{N}_])`, "iu"),
  );
  const find = (test: (line: string) => number): { line: string; at: number } | undefined => {
    for (const line of lines) {
      const at = test(line);
      if (at >= 0) return { line, at };
    }
    return undefined;
  };
  const found = find((line) => line.toLowerCase().indexOf(lower)) ??
    find((line) => {
      for (const re of wordRe) {
        const m = re.exec(line);
        if (m) return m.index + m[1]!.length;
      }
      return -1;
    }) ??
    find((line) => {
      for (const w of words) {
        const at = line.toLowerCase().indexOf(w);
        if (at >= 0) return at;
      }
      return -1;
    }) ??
    find((line) => (line.trim() ? 0 : -1)) ?? { line: "", at: 0 };
  return clip(found.line, found.at);
}

/** The words a websearch query looks for (negated words left out), lower-cased. */
function searchWordsOf(query: string): string[] {
  const words: string[] = [];
  for (const m of query.toLowerCase().matchAll(/(^|\s)(-?)"?([^\s"]+)/gu)) {
    if (m[2] === "-" || m[3] === "or") continue;
    words.push(...(m[3]!.match(/[\p{L}\p{N}_]+/gu) ?? []));
  }
  return words;
}

/** Trimmed and escaped; a long line shows the part around column `at`, marked with `…`. */
function clip(line: string, at: number): string {
  const lead = line.length - line.trimStart().length;
  const text = escapeLine(line.trim());
  if (text.length <= LINE_MAX) return text;
  // Escaping only lengthens text before `at`: start a little before where the match now is.
  const shift = escapeLine(line.slice(lead, lead + Math.max(0, at - lead))).length;
  const start = Math.max(0, Math.min(shift - 40, text.length - (LINE_MAX - 1)));
  if (start === 0) return `${text.slice(0, LINE_MAX - 1)}…`;
  const body = text.slice(start, start + LINE_MAX - 2);
  return `…${body}${start + body.length < text.length ? "…" : ""}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
