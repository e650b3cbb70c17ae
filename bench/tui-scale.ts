// 1,000 live agents in one TUI (issue 15): a tree of 1,000 agents — 200 streaming ~20 chunks a
// second from another process (bench/stream-load.ts, the real stream publisher), 40 waiting team
// leads and their 760 idle members — with its root `wait`ing on the 200 streamers. The TUI on the
// root is measured beside the same TUI on a small idle tree (10 agents, the root waiting on 5):
// panel keys (↑↓ scrolling the open Ctrl+T panel) from another process to the screen, the panel's
// opening, a fan-in status change to the status layer on screen, the process's resident memory
// and its main thread's CPU time per second.
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as delay } from "node:timers/promises";
import { eq, sql } from "drizzle-orm";
import { agents } from "../src/agents/agents.sql.js";
import { createTree } from "../src/agents/tree.js";
import { createBus, type Bus } from "../src/bus/bus.js";
import { closeDb, createDb, type Db } from "../src/db/client.js";
import { FRAME_MS } from "../src/ui/frame.js";
import { panelOrder } from "../src/ui/views/agent-panel.js";
import { GLYPH } from "../src/ui/views/glyphs.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { collectGarbage, median, nowMs, percentile, procStatCpuMs } from "./stats.js";
import { openHarness, stopProcess, type Harness } from "./tui-harness.js";

/** The shape of a benchmark tree under its root. */
interface TreeShape {
  /** Children the root waits on (`worker-000` …): streaming when `streaming`, else idle. */
  workers: number;
  streaming: boolean;
  /** Waiting team leads under the root, each with `members` idle agents below it. */
  teams: number;
  members: number;
}

const BIG: TreeShape = { workers: 200, streaming: true, teams: 40, members: 19 };
const SMALL: TreeShape = { workers: 5, streaming: false, teams: 1, members: 4 };
/** The big tree without its load: what size alone costs. */
const BIG_QUIET: TreeShape = { ...BIG, streaming: false };

const PANEL_KEYS = 120;
/** How far down the panel the keys walk before walking back up (the panel scrolls past ~17). */
const PANEL_WALK = 60;
const PANEL_OPENS = 15;
const STATUS_FLIPS = 20;
/** The status layer shows 40 % of the screen's rows: flips are of entries it shows. */
const STATUS_VISIBLE = 10;
const CPU_WINDOW_MS = 5_000;
/** The loader's streams and agent hints run this long before anything is measured. */
const WARM_MS = 3_000;
const NO_MODEL = "http://127.0.0.1:9/v1"; // nothing here asks a model

const CTRL_T = "\x14";
const ESCAPE = "\x1b";
const DOWN = "\x1b[B";
const UP = "\x1b[A";

interface Measured {
  panelKeys: number[];
  panelOpens: number[];
  statusFlips: number[];
  /** Main-thread CPU ms per second with the panel open (the process's CPU off Linux). */
  threadMsPerS: number;
  /** Process CPU (all threads: V8's GC helpers too) ms per second, same window. */
  cpuMsPerS: number;
  rssBytes: number;
  framesPerS: number;
}

/** The trees measured, in this order: their names are what FIGURES compare. */
const TREES = [
  { name: "small", shape: SMALL, says: "a small idle tree (10 agents, the root waiting on 5)" },
  { name: "quiet", shape: BIG_QUIET, says: "1,000 agents, none streaming" },
  { name: "big", shape: BIG, says: "1,000 agents, 200 streaming, the root waiting on the 200" },
] as const;

type Trees = Record<(typeof TREES)[number]["name"], Measured>;

/**
 * Each row: what `measure` gives for the `tree` beside what it gives for the small idle tree
 * (`reference` names that), or, with `figure`, a figure of its own beside a fixed reference.
 */
type Figure = { name: string; unit: string; reference: string } & (
  | { tree: "big" | "quiet"; measure: (m: Measured) => number }
  | { figure: (t: Trees) => number; referenceFigure: number }
);

const p99 = (samples: number[]) => percentile(samples, 99);
const mib = (bytes: number) => bytes / 1024 / 1024;

const FIGURES: Figure[] = [
  {
    name: "panel key → screen, 1,000 agents, 200 streaming (p50)",
    tree: "big",
    measure: (m) => median(m.panelKeys),
    unit: "ms",
    reference: "panel key → screen, 10 idle agents",
  },
  {
    name: "panel key → screen, 1,000 agents, 200 streaming (p99)",
    tree: "big",
    measure: (m) => p99(m.panelKeys),
    unit: "ms",
    reference: "panel key → screen p99, 10 idle agents",
  },
  {
    name: "panel key → screen, 1,000 agents, none streaming (p99)",
    tree: "quiet",
    measure: (m) => p99(m.panelKeys),
    unit: "ms",
    reference: "panel key → screen p99, 10 idle agents",
  },
  {
    name: "Ctrl+T → panel on screen, 1,000 agents (p50)",
    tree: "big",
    measure: (m) => median(m.panelOpens),
    unit: "ms",
    reference: "panel open, 10 idle agents",
  },
  {
    name: "Ctrl+T → panel on screen, 1,000 agents (max)",
    tree: "big",
    measure: (m) => Math.max(...m.panelOpens),
    unit: "ms",
    reference: "panel open max, 10 idle agents",
  },
  {
    name: "fan-in status change → status layer on screen, 200 awaited (p50)",
    tree: "big",
    measure: (m) => median(m.statusFlips),
    unit: "ms",
    reference: "the same with 5 awaited",
  },
  {
    name: "200-awaited status change, p50 beyond the 5-awaited one",
    figure: (t) => median(t.big.statusFlips) - median(t.small.statusFlips),
    unit: "ms",
    reference: "one frame (src/ui/frame.ts FRAME_MS)",
    referenceFigure: FRAME_MS,
  },
  {
    name: "TUI process RSS, 1,000 agents, panel open",
    tree: "big",
    measure: (m) => mib(m.rssBytes),
    unit: "MiB",
    reference: "RSS with 10 idle agents",
  },
  {
    name: "main-thread CPU per second, 1,000 agents, panel open",
    tree: "big",
    measure: (m) => m.threadMsPerS,
    unit: "ms/s",
    reference: "main-thread CPU per second, 10 idle agents",
  },
  {
    name: "main-thread CPU per frame, 1,000 agents, panel open",
    tree: "big",
    measure: (m) => m.threadMsPerS / m.framesPerS,
    unit: "ms",
    reference: "main-thread CPU per frame, 10 idle agents",
  },
  {
    name: "process CPU per second, 1,000 agents, panel open",
    tree: "big",
    measure: (m) => m.cpuMsPerS,
    unit: "ms/s",
    reference: "process CPU per second, 10 idle agents",
  },
];

function figureRow(f: Figure, t: Trees): BenchRow {
  const [figure, reference] =
    "tree" in f ? [f.measure(t[f.tree]), f.measure(t.small)] : [f.figure(t), f.referenceFigure];
  return row(`tui-scale: ${f.name}`, figure, f.unit, f.reference, reference);
}

export async function tuiScale(context: BenchContext): Promise<BenchRow[]> {
  const { url, log } = context;
  process.env.TERM ??= "xterm-256color";
  const db = createDb(url, { max: 4, applicationName: "warren-bench-tui-scale" });
  const bus = await createBus(url);
  try {
    const measured: Partial<Trees> = {};
    for (const tree of TREES) {
      log(`tui-scale: ${tree.says}`);
      measured[tree.name] = await measureTree(db, bus, url, tree.shape, log);
    }
    const trees = measured as Trees;
    return FIGURES.map((f) => figureRow(f, trees));
  } finally {
    await bus.close();
    await closeDb(db);
  }
}

async function measureTree(
  db: Db,
  bus: Bus,
  url: string,
  shape: TreeShape,
  log: (line: string) => void,
): Promise<Measured> {
  const tree = await populateTree(db, shape);
  const loader = shape.streaming ? await startLoader(url, tree.rootId, tree.workerIds) : undefined;
  const root = (await db.select().from(agents).where(eq(agents.id, tree.rootId)))[0]!;
  const h = await openHarness(db, bus, root, NO_MODEL);
  try {
    await h.frame((text) => /received|running\s+worker-000 /.test(text), "the status layer");
    if (loader) await delay(WARM_MS);
    const statusFlips = await flipStatuses(
      db,
      h,
      tree.rootId,
      Math.min(shape.workers, STATUS_VISIBLE),
    );
    const panelOpens = await openPanel(h);
    const order = await panelNames(db, tree.rootId);
    const opened = h.frame((text) => text.includes("Esc close"), "the panel");
    h.type(CTRL_T);
    await opened;
    const panelKeys = await walkPanel(h, order);
    const framesBefore = h.frames();
    const { threadMsPerS, cpuMsPerS } = await mainThreadBusy(CPU_WINDOW_MS);
    const framesPerS = (h.frames() - framesBefore) / (CPU_WINDOW_MS / 1000);
    collectGarbage();
    const rssBytes = process.memoryUsage.rss();
    const streamRows = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from agent_streams where tree_id = ${tree.rootId}`,
    );
    log(
      `tui-scale: ${tree.agents} agents; stream rows written ${streamRows.rows[0]!.n} ` +
        `(only watched agents'); main thread ${threadMsPerS.toFixed(0)} ms/s, process CPU ` +
        `${cpuMsPerS.toFixed(0)} ms/s, ${framesPerS.toFixed(1)} frames/s with the panel open; ` +
        `panel keys p50 ${median(panelKeys).toFixed(2)}, p99 ${p99(panelKeys).toFixed(2)}, ` +
        `max ${Math.max(...panelKeys).toFixed(2)} ms`,
    );
    return { panelKeys, panelOpens, statusFlips, threadMsPerS, cpuMsPerS, rssBytes, framesPerS };
  } finally {
    await h.close();
    if (loader) log(`tui-scale: the loader offered ${await stopLoader(loader)}`);
  }
}

/**
 * The tree, written in a few statements: the root `waiting` on its workers (its wait_status lists
 * them, all running), the workers, then the team leads and their members, oldest first in that
 * order (the panel lists children by age).
 */
async function populateTree(
  db: Db,
  shape: TreeShape,
): Promise<{ rootId: string; workerIds: string[]; agents: number }> {
  const root = await createTree(db, { cwd: os.tmpdir(), model: "fake-model" });
  const workerState = shape.streaming ? "running" : "idle";
  const workers = await db.execute<{ id: string }>(sql`
    insert into agents (tree_id, parent_id, name, state, depth, model, activity, busy_since,
                        created_at, last_activity_at)
    select ${root.id}::uuid, ${root.id}::uuid, 'worker-' || lpad(i::text, 3, '0'), ${workerState},
           1, 'fake-model', case when ${workerState} = 'running' then 'thinking' end,
           case when ${workerState} = 'running' then now() end,
           now() + make_interval(secs => i / 1000.0), now()
      from generate_series(0, ${shape.workers - 1}) as i
    returning id`);
  await db.execute(sql`
    insert into agents (tree_id, parent_id, name, state, depth, model, activity, busy_since,
                        created_at, last_activity_at)
    select ${root.id}::uuid, ${root.id}::uuid, 'team-' || lpad(t::text, 2, '0'), 'waiting', 1,
           'fake-model', ${`waiting for ${shape.members} agents`}, now(),
           now() + make_interval(secs => 1 + t / 10.0), now()
      from generate_series(0, ${shape.teams - 1}) as t`);
  await db.execute(sql`
    insert into agents (tree_id, parent_id, name, state, depth, model, created_at, last_activity_at)
    select ${root.id}::uuid, t.id, 'member-' || substring(t.name from 6) || '-' || lpad(m::text, 2, '0'),
           'idle', 2, 'fake-model', t.created_at + make_interval(secs => (m + 1) / 1000.0), now()
      from agents t cross join generate_series(0, ${shape.members - 1}) as m
     where t.tree_id = ${root.id} and t.parent_id = ${root.id} and t.name like 'team-%'`);
  await db.execute(sql`
    update agents r set state = 'waiting', busy_since = now(),
           activity = ${`waiting for ${shape.workers} agents`},
           wait_status = (select jsonb_agg(jsonb_build_object('agent_id', w.id, 'name', w.name,
                                                              'status', 'running') order by w.name)
                            from agents w where w.parent_id = r.id and w.name like 'worker-%')
     where r.id = ${root.id}`);
  return {
    rootId: root.id,
    workerIds: workers.rows.map((w) => w.id),
    agents: shape.workers + shape.teams * (1 + shape.members),
  };
}

/** The panel's rows top to bottom, by name (as the TUI will list them). */
async function panelNames(db: Db, rootId: string): Promise<string[]> {
  const rows = await db.select().from(agents).where(eq(agents.tree_id, rootId));
  return panelOrder(rows).map((r) => r.agent.name);
}

/**
 * One awaited agent's status at a time goes running → received → running (an entry the layer
 * shows), written as the fan-in's wait_status writer would; timed until the screen shows it.
 */
async function flipStatuses(db: Db, h: Harness, rootId: string, visible: number) {
  const samples: number[] = [];
  for (let i = 0; i < STATUS_FLIPS; i++) {
    const entry = i % visible;
    const name = `worker-${String(entry).padStart(3, "0")}`;
    const status = Math.floor(i / visible) % 2 === 0 ? "received" : "running";
    const shown = h.frame(
      (text) => new RegExp(`${status}\\s+${name} `).test(text),
      `${name} ${status} in the status layer`,
    );
    const start = nowMs();
    await db.execute(sql`
      update agents set wait_status = jsonb_set(wait_status, ${`{${entry},status}`}::text[],
                                                ${JSON.stringify(status)}::jsonb)
       where id = ${rootId}`);
    samples.push((await shown) - start);
  }
  return samples;
}

/** Ctrl+T until the panel is on screen, then Escape closes it (not timed). */
async function openPanel(h: Harness): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < PANEL_OPENS; i++) {
    const shown = h.frame((text) => text.includes("Esc close"), "the panel");
    const start = nowMs();
    h.type(CTRL_T);
    samples.push((await shown) - start);
    const closed = h.frame((text) => !text.includes("Esc close"), "the panel closed");
    h.type(ESCAPE);
    await closed;
  }
  return samples;
}

/**
 * ↓ and ↑ typed by another process, walking the selection down the open panel and back, each
 * timed until the frame marks the next agent selected.
 */
async function walkPanel(h: Harness, order: readonly string[]): Promise<number[]> {
  const last = Math.min(order.length - 1, PANEL_WALK);
  const samples: number[] = [];
  let at = 0;
  let step = 1;
  for (let i = 0; i < PANEL_KEYS; i++) {
    if (at + step < 0 || at + step > last) step = -step;
    at += step;
    const name = order[at]!;
    const selected = new RegExp(`${GLYPH.selected}\\s+\\S ${name} `);
    const shown = h.frame((text) => selected.test(text), `${name} selected`);
    const sentAt = await h.typeFromOutside(step > 0 ? DOWN : UP, 15 + Math.random() * 25);
    samples.push((await shown) - sentAt);
  }
  return samples;
}

/**
 * CPU time of the main thread (Linux: /proc/self/task/<pid>/stat, in clock ticks of 10 ms) and of
 * the whole process (V8's GC helper threads too), per second, over `ms` of wall time.
 */
async function mainThreadBusy(ms: number): Promise<{ threadMsPerS: number; cpuMsPerS: number }> {
  const thread = mainThreadCpuMs();
  const cpu = process.cpuUsage();
  const start = nowMs();
  await delay(ms);
  const seconds = (nowMs() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuMsPerS = (used.user + used.system) / 1000 / seconds;
  const threadNow = mainThreadCpuMs();
  return {
    threadMsPerS:
      thread === undefined || threadNow === undefined ? cpuMsPerS : (threadNow - thread) / seconds,
    cpuMsPerS,
  };
}

function mainThreadCpuMs(): number | undefined {
  return procStatCpuMs(`/proc/self/task/${process.pid}/stat`);
}

function startLoader(url: string, treeId: string, agentIds: string[]): Promise<ChildProcess> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "stream-load.js");
  const child = spawn(process.execPath, [script, JSON.stringify({ url, treeId, agentIds })], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise<ChildProcess>((resolve, reject) => {
    child.stdout!.once("data", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`stream loader exited (${code})`)));
  });
}

/** Stops the loader; resolves with what it says it offered. */
async function stopLoader(child: ChildProcess): Promise<string> {
  let said = "";
  child.stdout!.on("data", (chunk: Buffer) => (said += chunk.toString("utf8")));
  await stopProcess(child);
  return said.trim();
}
