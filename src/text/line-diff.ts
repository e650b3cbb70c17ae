// A line diff for a person to read (an approval request shows what changed in a file): removed
// lines `-`, added `+`, two lines of context, runs of unchanged lines elided. Longest common
// subsequence over lines; past a few thousand lines it falls back to "all removed, all added".

const CONTEXT = 2;
const MAX_CELLS = 4_000_000;

type Op = { kind: " " | "-" | "+"; line: string };

function ops(before: string[], after: string[]): Op[] {
  const n = before.length;
  const m = after.length;
  if (n * m > MAX_CELLS) {
    return [
      ...before.map((line) => ({ kind: "-" as const, line })),
      ...after.map((line) => ({ kind: "+" as const, line })),
    ];
  }
  // lcs[i][j]: the longest common subsequence of before[i..] and after[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] =
        before[i] === after[j]
          ? lcs[i + 1]![j + 1]! + 1
          : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push({ kind: " ", line: before[i]! });
      i++;
      j++;
    } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      // Removed lines before added ones, as diff shows them.
      out.push({ kind: "-", line: before[i]! });
      i++;
    } else {
      out.push({ kind: "+", line: after[j]! });
      j++;
    }
  }
  return out;
}

function lines(text: string | null): string[] {
  if (text === null || text === "") return [];
  return text.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n");
}

/** `before` → `after` (null: no file) as diff lines, at most `maxLines` (the rest counted). */
export function lineDiff(before: string | null, after: string | null, maxLines = 80): string[] {
  const all = ops(lines(before), lines(after));
  const keep = all.map((op, k) =>
    op.kind !== " "
      ? true
      : all.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((o) => o.kind !== " "),
  );
  const out: string[] = [];
  let skipped = 0;
  all.forEach((op, k) => {
    if (keep[k]) {
      if (skipped > 0) out.push(`  … ${skipped} unchanged line${skipped === 1 ? "" : "s"}`);
      skipped = 0;
      out.push(`${op.kind} ${op.line}`);
    } else skipped++;
  });
  if (skipped > 0) out.push(`  … ${skipped} unchanged line${skipped === 1 ? "" : "s"}`);
  if (out.length <= maxLines) return out;
  return [...out.slice(0, maxLines), `  … ${out.length - maxLines} more diff lines`];
}
