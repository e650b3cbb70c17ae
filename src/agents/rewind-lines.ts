// The lines `warren rewind --list` and `/rewind` show: one per turn, and what a rewind does not
// undo (issue 43).
import { escapeLine } from "../text/escape.js";
import type { NotUndone, RewindResult, TurnInfo } from "./rewind.js";

/** One line per turn: number, when, what started it, files changed, tokens. */
export function turnLine(t: TurnInfo): string {
  const when = t.at.toISOString().replace("T", " ").slice(0, 19);
  const who = t.startedBy === "user" ? "person" : "mail";
  const text = escapeLine(t.text.replace(/\s+/g, " ")).slice(0, 60);
  const files = filesText(t);
  const tokens = `${t.tokensIn}/${t.tokensOut} tok`;
  const mark = t.rewound ? " (rewound)" : "";
  return `${String(t.turn).padStart(4)}  ${when}  ${who.padEnd(6)} ${files.padEnd(13)} ${tokens.padEnd(14)} ${text}${mark}`;
}

/** The files a turn changed, as counted when the next checkpoint was taken ("files ?" before). */
export function filesText(t: TurnInfo): string {
  const files = t.checkpoint?.files;
  if (files) return `${files.length} file${files.length === 1 ? "" : "s"}`;
  return t.checkpoint ? "files ?" : "no checkpoint";
}

export function notUndoneLines(n: NotUndone): string[] {
  const lines: string[] = [];
  for (const m of n.mail) lines.push(`  mail to ${escapeLine(m.to)}: ${escapeLine(m.text)}`);
  for (const f of n.forks) lines.push(`  ${escapeLine(f)}`);
  return lines.length ? ["not undone (already delivered or running on their own):", ...lines] : [];
}

/** What a rewind did, in one line (the command line's and the TUI's answer). */
export function rewindLine(name: string, turn: number, done: RewindResult): string {
  const parts: string[] = [];
  if (done.files) {
    parts.push(
      done.files.checkpoint
        ? `files: ${done.files.written.length} written, ${done.files.removed.length} removed`
        : "files: no turn since changed any",
    );
    if (done.files.skipped.length) {
      parts.push(`not restored (over the size limit): ${done.files.skipped.join(", ")}`);
    }
  }
  if (done.rewoundEvents !== undefined) {
    parts.push(`conversation: ${done.rewoundEvents} events rewound`);
  }
  return `rewound ${name} to before turn ${turn}; ${parts.join("; ")}`;
}
