// Events a rewind undid (marked `rewound_at`, out of every request) stay in the scrollback folded
// behind one line: each run of them becomes a `rewound` entry, followed by the run itself when the
// person unfolded it (Enter on an empty input, or a click on the line: dispatch.ts). Pure and
// linear; the usual history, with nothing rewound, is returned as it is after one look.
import type { ScrollEntry } from "./entry-lines.js";

export interface Folded {
  entries: ScrollEntry[];
  /** Per entry of `entries`: the key of the fold it is the line of or lies in (else undefined). */
  foldOf: (number | undefined)[];
}

function rewoundAt(entry: ScrollEntry): Date | null | undefined {
  if (entry.kind === "event") return entry.event.rewound_at;
  if (entry.kind === "call") return entry.call.rewound_at;
  return undefined;
}

/** How many events an entry shows (a call with its result is two). */
function eventCount(entry: ScrollEntry): number {
  return entry.kind === "call" && entry.result ? 2 : 1;
}

/** `entries` (calls grouped: tool-group.ts) with each run of rewound ones folded. */
export function foldRewound(
  entries: readonly ScrollEntry[],
  unfolded: ReadonlySet<number>,
): Folded {
  if (!entries.some((entry) => rewoundAt(entry))) {
    return { entries: entries as ScrollEntry[], foldOf: [] };
  }
  const out: ScrollEntry[] = [];
  const foldOf: (number | undefined)[] = [];
  let i = 0;
  while (i < entries.length) {
    const entry = entries[i]!;
    if (!rewoundAt(entry)) {
      out.push(entry);
      foldOf.push(undefined);
      i++;
      continue;
    }
    const run: ScrollEntry[] = [];
    let count = 0;
    let at = 0;
    for (; i < entries.length; i++) {
      const when = rewoundAt(entries[i]!);
      if (!when) break;
      run.push(entries[i]!);
      count += eventCount(entries[i]!);
      at = Math.max(at, new Date(when).getTime());
    }
    const head = run[0]!;
    const first = head.kind === "event" ? head.event.id : head.kind === "call" ? head.call.id : 0;
    const open = unfolded.has(first);
    out.push({ kind: "rewound", first, count, at: new Date(at), open });
    foldOf.push(first);
    if (!open) continue;
    for (const inner of run) {
      out.push(inner);
      foldOf.push(first);
    }
  }
  return { entries: out, foldOf };
}
