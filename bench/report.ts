// The result rows every benchmark returns, the printed table, the JSON file and the goal notes.
import fs from "node:fs/promises";

export interface BenchRow {
  name: string;
  figure: number;
  unit: string;
  reference_name: string;
  reference_figure: number;
  /** figure / reference_figure, unless the row says otherwise (throughput: higher is better). */
  ratio: number;
}

export interface BenchContext {
  /** The scratch database, migrated, dropped after the run. */
  url: string;
  /** Aborted at the overall timeout or on Ctrl-C: loops stop and waits reject. */
  signal: AbortSignal;
  /** Progress lines for the person watching (stderr). */
  log: (line: string) => void;
}

export type Benchmark = (context: BenchContext) => Promise<BenchRow[]>;

export function row(
  name: string,
  figure: number,
  unit: string,
  referenceName: string,
  referenceFigure: number,
): BenchRow {
  return {
    name,
    figure,
    unit,
    reference_name: referenceName,
    reference_figure: referenceFigure,
    ratio: figure / referenceFigure,
  };
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US"); // counts
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 10) return value.toFixed(2);
  return value.toFixed(3);
}

export function formatTable(rows: readonly BenchRow[]): string[] {
  const header = ["name", "figure", "unit", "reference", "reference figure", "ratio"];
  const cells = rows.map((r) => [
    r.name,
    formatNumber(r.figure),
    r.unit,
    r.reference_name,
    formatNumber(r.reference_figure),
    `${r.ratio.toFixed(2)}×`,
  ]);
  const numeric = [false, true, false, false, true, true];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...cells.map(line)];
}

interface Goal {
  text: string;
  /** The row whose ratio or figure the goal is about. */
  rowName: string;
  met: (row: BenchRow) => boolean;
  show: (row: BenchRow) => string;
}

// From the issue; printed as notes beside the table, never asserted.
const GOALS: Goal[] = [
  {
    text: "fan-in: model requests per child ≤ 1.05 (issue 42: a result in one request)",
    rowName: "fan-in model requests per child",
    met: (r) => r.figure <= 1.05,
    show: (r) => formatNumber(r.figure),
  },
  {
    text: "fan-in: uncached input per child ≤ 0.6× the two-request children's",
    rowName: "fan-in uncached input tokens per child",
    met: (r) => r.ratio <= 0.6,
    show: (r) => `${r.ratio.toFixed(2)}×`,
  },
  {
    // As the issue states it: the median of the five runs of one invocation.
    text: "wake p50 ≤ 2× raw NOTIFY round trip, median of 5 runs",
    rowName: "wake p50 ÷ raw, median of 5 runs",
    met: (r) => r.figure <= 2,
    show: (r) => `${r.figure.toFixed(2)}×`,
  },
  {
    text: "wake p99 ≤ 5 ms",
    rowName: "wake p99 (0 idle)",
    met: (r) => r.figure <= 5,
    show: (r) => `${formatNumber(r.figure)} ms`,
  },
  {
    text: "wake p50 with 1,000 idle agents ≤ 1.5× p50 with none",
    rowName: "wake p50 1000 idle vs 0 idle",
    met: (r) => r.ratio <= 1.5,
    show: (r) => `${r.ratio.toFixed(2)}×`,
  },
  {
    text: "mail throughput ≥ graphile-worker (ratio = ours / theirs, higher is better)",
    rowName: "mail throughput (100 pairs)",
    met: (r) => r.ratio >= 1,
    show: (r) => `${r.ratio.toFixed(2)}×`,
  },
  {
    // Pools open connections on demand up to a fixed size: 10 agents may leave them short of it,
    // so the count with 1,000 is held to that size (which does not depend on agents), not to 10's.
    text: "database connections do not grow with agents: 1,000 live ≤ the threads' pools and listeners",
    rowName: "DB connections, 1000 waiting agents, beside the ceiling",
    met: (r) => r.ratio <= 1,
    show: (r) => `${formatNumber(r.figure)} of ${formatNumber(r.reference_figure)}`,
  },
  {
    text: "LISTEN connections with 1,000 live agents = with 10 (one per worker thread)",
    rowName: "LISTEN connections, 1000 waiting agents",
    met: (r) => r.ratio <= 1,
    show: (r) => `${formatNumber(r.figure)} vs ${formatNumber(r.reference_figure)}`,
  },
  {
    text: "the sandbox adds ≤ 5 ms to a bash call's p50 (bubblewrap vs the same tool unconfined)",
    rowName: "bash call p50 added by the sandbox",
    met: (r) => r.figure <= 5,
    show: (r) => `${formatNumber(r.figure)} ms`,
  },
  {
    text: "the network gate adds ≤ 5 ms p50 to a loopback HTTP request through CONNECT (HTTPS)",
    rowName: "HTTP request p50 added by the gate (CONNECT)",
    met: (r) => r.figure <= 5,
    show: (r) => `${formatNumber(r.figure)} ms`,
  },
  {
    text: "the network gate adds ≤ 5 ms p50 to a loopback plain-HTTP request",
    rowName: "HTTP request p50 added by the gate (plain HTTP)",
    met: (r) => r.figure <= 5,
    show: (r) => `${formatNumber(r.figure)} ms`,
  },
  {
    text: "task_claim hands a task to a waiting claimer within 2× a raw NOTIFY round trip, median of 5 runs",
    rowName: "task_claim wake ÷ raw, median of 5 runs",
    met: (r) => r.figure <= 2,
    show: (r) => `${r.figure.toFixed(2)}×`,
  },
  {
    text: "a worktree fork costs at most 1.3× a plain fork plus `git worktree add` alone (100 files, p50)",
    rowName: "worktree fork, 100-file repository (p50)",
    met: (r) => r.ratio <= 1.3,
    show: (r) => `${r.ratio.toFixed(2)}×`,
  },
  {
    text: "a checkpoint of a 5,000-file repository with 10 changed files ≤ 1.5× `git stash create` alone (p50)",
    rowName: "checkpoint, 5000-file repository, 10 files changed (p50)",
    met: (r) => r.ratio <= 1.5,
    show: (r) => `${r.ratio.toFixed(2)}×`,
  },
  {
    text: "`warren rewind --list` of an agent with 1,000 turns ≤ 100 ms (p50)",
    rowName: "rewind --list, 1000 turns (p50)",
    met: (r) => r.figure <= 100,
    show: (r) => `${formatNumber(r.figure)} ms`,
  },
  {
    text: "the model-concurrency cap adds at most one round trip per model request",
    rowName: "statements a capped request waits for",
    met: (r) => r.figure <= 1,
    show: (r) => `${formatNumber(r.figure)} per request`,
  },
  {
    text: "an agent's first request with 5 slow MCP servers (lists stored) ≤ 1.2× with none",
    rowName: "agent's first model request, 5 MCP servers (2 s starts, lists stored), median",
    met: (r) => r.ratio <= 1.2,
    show: (r) => `${r.ratio.toFixed(2)}×`,
  },
  {
    text: "an MCP call adds ≤ 2 ms p50 beyond the SDK's direct call to the same server",
    rowName: "MCP tools/call p50 added by warren",
    met: (r) => r.figure <= 2,
    show: (r) => `${formatNumber(r.figure)} ms`,
  },
  {
    text: "resident memory per waiting agent ≤ 48 KiB (issue 14)",
    rowName: "RSS per waiting agent",
    met: (r) => r.figure <= 48,
    show: (r) => `${formatNumber(r.figure)} KiB`,
  },
];

export function formatGoals(rows: readonly BenchRow[]): string[] {
  const lines = ["goals (notes, not assertions):"];
  for (const goal of GOALS) {
    const found = rows.find((r) => r.name === goal.rowName);
    const verdict = found
      ? `${goal.show(found)}, ${goal.met(found) ? "met" : "NOT met"}`
      : "not run";
    lines.push(`  - ${goal.text}: ${verdict}`);
  }
  return lines;
}

export async function writeJson(file: string, rows: readonly BenchRow[]): Promise<void> {
  await fs.writeFile(file, `${JSON.stringify(rows, null, 2)}\n`);
}
