// Events a rewind undid (marked `rewound_at`, out of every request) stay in the scrollback folded
// behind one line: each run of them becomes a `rewound` entry, followed by the run itself when the
// person unfolded it (Enter on an empty input, or a click on the line: dispatch.ts). Pure and
// linear; the usual history, with nothing rewound, is returned as it is after one look. Folded
// before calls are grouped (tool-group.ts), so the count is every event the rewind marked.
import type { ScrollEntry } from "./entry-lines.js";

function rewoundAt(entry: ScrollEntry): Date | null | undefined {
  if (entry.kind === "event") return entry.event.rewound_at;
  if (entry.kind === "call") return entry.call.rewound_at;
  return undefined;
}

/**
 * `entries` (events in order, before calls are grouped) with each run of rewound events behind
 * one `rewound` entry, the run itself following it when `unfolded` holds its key. The same array
 * when nothing is rewound.
 */
export function foldRewound(
  entries: readonly ScrollEntry[],
  unfolded: ReadonlySet<number>,
): ScrollEntry[] {
  if (!entries.some((entry) => rewoundAt(entry))) return entries as ScrollEntry[];
  const out: ScrollEntry[] = [];
  let i = 0;
  while (i < entries.length) {
    const entry = entries[i]!;
    if (!rewoundAt(entry)) {
      out.push(entry);
      i++;
      continue;
    }
    const start = i;
    let at = 0;
    for (; i < entries.length; i++) {
      const when = rewoundAt(entries[i]!);
      if (!when) break;
      at = Math.max(at, new Date(when).getTime());
    }
    const first = (entry as Extract<ScrollEntry, { kind: "event" }>).event.id;
    const open = unfolded.has(first);
    out.push({ kind: "rewound", first, count: i - start, at: new Date(at), open });
    if (open) out.push(...entries.slice(start, i));
  }
  return out;
}

/**
 * Per entry (calls grouped or not): the key of the fold it is the line of or lies in, else
 * undefined. An open fold's events follow its line, so one pass finds them.
 */
export function foldKeys(entries: readonly ScrollEntry[]): (number | undefined)[] {
  let fold: number | undefined;
  return entries.map((entry) => {
    if (entry.kind === "rewound") return (fold = entry.first);
    if (!rewoundAt(entry)) fold = undefined;
    return fold;
  });
}
