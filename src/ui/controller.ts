// The TUI's state, kept from the feed: the tree's agent rows, and for the viewed agent only its
// loaded events (paged from the database), its live stream and its queued input. Every database
// call is async and caught; changes only call onChange (the app paints on the next frame).
import type { AgentRow } from "../agents/agents.sql.js";
import type { EventRow } from "../agents/events.sql.js";
import { listEvents, listRecentEvents } from "../agents/events.js";
import { listTree } from "../agents/tree.js";
import { listPending, type PendingApproval } from "../approvals/approvals.js";
import type { Db } from "../db/client.js";
import type { Warning } from "../db/warning.js";
import type { Feed, FeedUpdate, StreamSnapshot } from "../feed/types.js";
import { pendingInputs, type PendingInput } from "../mail/input.js";
import { describeFailure } from "./failure.js";
import { noteNeed, type Need } from "./views/agent-filter.js";
import type { ScrollEntry } from "./views/entry-lines.js";

/** The gate's activity while a call waits for a person (approval-gate.ts). */
const ASKING = "? needs approval";

/** Events loaded per page of history. */
export const PAGE_SIZE = 200;

/** A scrollback entry with its place: events by id; a notice sits after the events it followed. */
interface Placed {
  key: number;
  entry: ScrollEntry;
}

export interface TuiState {
  readonly rootId: string;
  /** Every agent of the tree not reaped, by id. */
  agents: Map<string, AgentRow>;
  /**
   * Bumped whenever `agents` or `reaped` changes (a row replaced, added, reaped): what frames derive
   * from the whole tree is kept until it moves (tree-figures.ts). Change them only through the
   * controller.
   */
  treeVersion: number;
  /** The reaped ones (dead, their counters final): only the tree's token total counts them. */
  reaped: Map<string, AgentRow>;
  currentId: string;
  /** The viewed agent's loaded history and notices, in order. */
  placed: Placed[];
  /** Older events exist in the database than the oldest loaded. */
  hasOlder: boolean;
  /**
   * Newer events exist than the newest loaded (a view opened around an older event, by search):
   * live events wait until the history loaded reaches them, and no stream or queued input shows.
   */
  hasNewer: boolean;
  stream: StreamSnapshot | undefined;
  pending: PendingInput[];
  /** The feed's database outage while it lasts, shown in the status bar. */
  outage: Warning | undefined;
  /** Since when the viewed agent's first page is loading (Date.now()), while it is. */
  loadingSince: number | undefined;
  /** The tree's open approval requests, oldest first (from any process: read from the rows). */
  approvals: PendingApproval[];
  /** Agents whose turn ended or failed while the person looked elsewhere; cleared by a view. */
  needs: Map<string, Exclude<Need, "approval">>;
}

export interface Controller {
  readonly state: TuiState;
  /** Loads the tree and the first view; subscribes to the feed. */
  start(): Promise<void>;
  /**
   * Shows another agent: its last page of events, its stream and queued input; with `around`, the
   * history around that event instead (half a page before it, a page after: see loadNewer).
   */
  view(agentId: string, around?: number): Promise<void>;
  /** Pages older history in (no-op while a page loads or when there is none). */
  loadOlder(): Promise<void>;
  /** Pages newer history in, up to the live end (no-op while a page loads or when there is none). */
  loadNewer(): Promise<void>;
  /** A one-line (or a few lines) local message in the current view; never stored. */
  notice(text: string, level?: "info" | "error"): void;
  /**
   * An event this process just wrote, shown at once when it is the viewed agent's, so that a
   * notice answering it lands below it (the feed's copy, arriving later, is a duplicate).
   */
  addEvent(event: EventRow): void;
  /** An agent row this process wrote first (a fork): known at once, the feed's copy follows. */
  putAgent(row: AgentRow): void;
  /** Agents this process reaped: out of navigation, their tokens still the tree's. */
  markReaped(ids: readonly string[]): void;
  /** The entries to draw: history and notices, then the live stream, then queued input. */
  entries(): ScrollEntry[];
  current(): AgentRow | undefined;
  /** Re-reads the agents and the current view (after a resync or a lost connection). */
  reload(): Promise<void>;
  /** Re-reads the open approval requests soon (coalesced: one small indexed query). */
  refreshApprovals(): void;
  close(): void;
}

export interface ControllerOptions {
  db: Db;
  /** The tree's feed, or its opening: the TUI draws its first frame while the feed opens. */
  feed: Feed | Promise<Feed>;
  rootId: string;
  onChange: () => void;
  /** The viewed agent's live text moved on (and nothing else did): defaults to onChange. */
  onText?: () => void;
  /**
   * The history of an agent just switched to arrived: the answer to the person's key (or pick,
   * or command), which the frame shows as it would the key. Defaults to onChange.
   */
  onShown?: () => void;
  /**
   * How many events to read when an agent is shown: the screen's rows (an event takes one at
   * least) fill the screen, so opening a long history reads, parses and lays out what is seen;
   * older events page in as the view reaches them. Default PAGE_SIZE.
   */
  firstPage?: () => number;
  /** The listener reconnected (hints may have been lost; the connection is back). */
  onResync?: () => void;
  /** Called with a one-line message when a background read fails. */
  onError: (message: string) => void;
}

export function createController(options: ControllerOptions): Controller {
  const { db, onChange } = options;
  /** The feed once start() has it; views chosen before that are watched when start() ends. */
  let feed: Feed | undefined;
  const state: TuiState = {
    rootId: options.rootId,
    agents: new Map(),
    treeVersion: 0,
    reaped: new Map(),
    currentId: options.rootId,
    placed: [],
    hasOlder: false,
    hasNewer: false,
    loadingSince: undefined,
    stream: undefined,
    pending: [],
    outage: undefined,
    approvals: [],
    needs: new Map(),
  };
  const eventIds = new Set<number>();
  let noticeSeq = 0;
  // Bumped on every view change: results of reads for an older view are dropped.
  let generation = 0;
  let loadingOlder = false;
  let loadingNewer = false;
  let unsubscribe: (() => void) | undefined;
  const firstPage = () => Math.min(PAGE_SIZE, Math.max(1, options.firstPage?.() ?? PAGE_SIZE));

  const lastEventId = () => {
    for (let i = state.placed.length - 1; i >= 0; i--) {
      const entry = state.placed[i]!.entry;
      if (entry.kind === "event") return entry.event.id;
    }
    return 0;
  };

  /** Inserts in key order (after equal keys); events are deduplicated by id. */
  const place = (key: number, entry: ScrollEntry) => {
    if (entry.kind === "event") {
      if (eventIds.has(entry.event.id)) return;
      eventIds.add(entry.event.id);
    }
    let i = state.placed.length;
    while (i > 0 && state.placed[i - 1]!.key > key) i--;
    state.placed.splice(i, 0, { key, entry });
  };

  const addEvents = (rows: EventRow[]) => {
    for (const event of rows) place(event.id, { kind: "event", event });
  };

  const guard = async (what: string, action: () => Promise<void>) => {
    try {
      await action();
    } catch (error) {
      options.onError(`${what}: ${describeFailure(error)}`);
    }
  };

  const refreshPending = async (agentId: string) => {
    const mine = generation;
    const rows = await pendingInputs(db, agentId);
    if (mine !== generation || agentId !== state.currentId) return;
    state.pending = rows;
    onChange();
  };

  // Requests are rows: an agent row whose activity becomes or stops being `? needs approval …`
  // (the gate writes it after the request, and replaces it once answered or withdrawn) or an
  // answer's system event says "go look"; other row changes (50 agents streaming) cost nothing.
  // One read per feed batch; reads never overlap, a change during a read reads again after it.
  let approvalsTimer: NodeJS.Timeout | undefined;
  let approvalsReading = false;
  let approvalsAgain = false;
  const readApprovals = async () => {
    if (approvalsReading) {
      approvalsAgain = true;
      return;
    }
    approvalsReading = true;
    try {
      do {
        approvalsAgain = false;
        state.approvals = await listPending(db, state.rootId);
      } while (approvalsAgain);
      onChange();
    } finally {
      approvalsReading = false;
    }
  };
  const scheduleApprovals = () => {
    if (approvalsTimer) return;
    approvalsTimer = setTimeout(() => {
      approvalsTimer = undefined;
      void guard("reading approval requests", readApprovals);
    }, 0);
  };

  const handle = (updates: FeedUpdate[]) => {
    let resync = false;
    /** Only the viewed agent's stream changed (a model delta): the person is reading it. */
    let textOnly = true;
    let moveTo: string | undefined;
    for (const update of updates) {
      textOnly &&= update.type === "stream";
      switch (update.type) {
        case "agent":
          if (
            asks(update.agent) ||
            asks(state.agents.get(update.agent.id)) ||
            rootTurned(update.agent, state.agents.get(update.agent.id), state.rootId)
          )
            scheduleApprovals();
          noteNeed(state.needs, state.currentId, {
            before: state.agents.get(update.agent.id),
            after: update.agent,
          });
          state.treeVersion++;
          if (!update.agent.reaped_at) {
            state.agents.set(update.agent.id, update.agent);
            break;
          }
          state.agents.delete(update.agent.id);
          state.reaped.set(update.agent.id, update.agent);
          // Reaped elsewhere (another TUI, `warren reap`) while shown here: go up to the living.
          if (update.agent.id === state.currentId) moveTo = livingAbove(update.agent.parent_id);
          break;
        case "event":
          if (update.event.kind === "system" && isApprovalAnswer(update.event)) scheduleApprovals();
          noteNeed(state.needs, state.currentId, { event: update.event });
          if (update.event.agent_id !== state.currentId || state.hasNewer) break;
          place(update.event.id, { kind: "event", event: update.event });
          // The final assistant event replaces the stream that showed it.
          if (update.event.kind === "assistant") state.stream = undefined;
          break;
        case "stream":
          if (update.stream.agentId !== state.currentId) break;
          state.stream = update.stream.live ? update.stream : undefined;
          break;
        case "input":
          if (update.agentId === state.currentId) {
            void guard("reading queued input", () => refreshPending(update.agentId));
          }
          break;
        case "resync":
          // The listener is back (it reconnected): whatever was unreachable is reachable again.
          state.outage = undefined;
          options.onResync?.();
          resync = true;
          break;
        case "connection":
          state.outage = update.warning.kind === "outage" ? update.warning : undefined;
          if (update.warning.kind === "outage-over") resync = true;
          break;
      }
    }
    if (moveTo) {
      const target = moveTo;
      void guard("switching agents", () => controller.view(target));
    } else if (resync) {
      void guard("reloading", () => controller.reload());
    }
    (textOnly ? (options.onText ?? onChange) : onChange)();
  };

  /** The first living agent from `id` upwards (the root when none is known). */
  const livingAbove = (id: string | null): string => {
    for (let at = id ? state.agents.get(id) : undefined; at;) {
      if (at.state !== "dead") return at.id;
      at = at.parent_id ? state.agents.get(at.parent_id) : undefined;
    }
    return state.rootId;
  };

  const loadAgents = async () => {
    const rows = await listTree(db, state.rootId, { includeReaped: true });
    state.agents = new Map(rows.filter((a) => !a.reaped_at).map((a) => [a.id, a]));
    state.reaped = new Map(rows.filter((a) => a.reaped_at).map((a) => [a.id, a]));
    state.treeVersion++;
  };

  const controller: Controller = {
    state,
    async start() {
      // The first view is loading from now: no welcome screen before its history is read.
      state.loadingSince = Date.now();
      feed = await options.feed;
      unsubscribe = feed.subscribe(handle);
      await loadAgents();
      await readApprovals();
      await controller.view(state.currentId);
    },
    async view(agentId, around) {
      const mine = ++generation;
      state.currentId = agentId;
      state.needs.delete(agentId);
      state.placed = [];
      eventIds.clear();
      state.stream = undefined;
      state.pending = [];
      state.hasOlder = false;
      state.hasNewer = false;
      loadingOlder = false;
      loadingNewer = false;
      feed?.watchStreams([agentId]);
      state.loadingSince = Date.now();
      onChange();
      let rows: EventRow[];
      let newer: EventRow[] = [];
      let pending: PendingInput[];
      const limit = around === undefined ? firstPage() : PAGE_SIZE / 2;
      try {
        [rows, newer, pending] = await Promise.all([
          listRecentEvents(db, agentId, {
            limit,
            ...(around === undefined ? {} : { before: around + 1 }),
          }),
          around === undefined
            ? []
            : listEvents(db, agentId, { after: around, limit: PAGE_SIZE + 1 }),
          pendingInputs(db, agentId),
        ]);
      } finally {
        if (mine === generation) state.loadingSince = undefined;
      }
      if (mine !== generation) return;
      addEvents(rows);
      addEvents(newer.slice(0, PAGE_SIZE));
      state.hasOlder = rows.length === limit;
      state.hasNewer = newer.length > PAGE_SIZE;
      state.pending = pending;
      (options.onShown ?? onChange)();
    },
    async loadOlder() {
      if (!state.hasOlder || loadingOlder) return;
      const first = state.placed.find((p) => p.entry.kind === "event");
      if (!first) return;
      loadingOlder = true;
      const mine = generation;
      try {
        const rows = await listRecentEvents(db, state.currentId, {
          before: first.key,
          limit: PAGE_SIZE,
        });
        if (mine !== generation) return;
        addEvents(rows);
        state.hasOlder = rows.length === PAGE_SIZE;
        onChange();
      } finally {
        if (mine === generation) loadingOlder = false;
      }
    },
    async loadNewer() {
      if (!state.hasNewer || loadingNewer) return;
      loadingNewer = true;
      const mine = generation;
      const agentId = state.currentId;
      try {
        const rows = await listEvents(db, agentId, { after: lastEventId(), limit: PAGE_SIZE + 1 });
        if (mine !== generation) return;
        addEvents(rows.slice(0, PAGE_SIZE));
        if (rows.length <= PAGE_SIZE) {
          // The live end: events the feed brought during that read were not placed; read them.
          state.hasNewer = false;
          addEvents(await listEvents(db, agentId, { after: lastEventId() }));
          if (mine !== generation) return;
          await refreshPending(agentId);
        }
        onChange();
      } finally {
        if (mine === generation) loadingNewer = false;
      }
    },
    notice(text, level = "info") {
      place(lastEventId() + 0.5, { kind: "notice", id: ++noticeSeq, level, text });
      onChange();
    },
    addEvent(event) {
      if (event.agent_id !== state.currentId || state.hasNewer) return;
      place(event.id, { kind: "event", event });
      onChange();
    },
    putAgent(row) {
      state.agents.set(row.id, row);
      state.treeVersion++;
      onChange();
    },
    markReaped(ids) {
      for (const id of ids) {
        const row = state.agents.get(id);
        if (row) state.reaped.set(id, row);
        state.agents.delete(id);
      }
      state.treeVersion++;
      onChange();
    },
    entries() {
      const out = state.placed.map((p) => p.entry);
      const stream = state.stream;
      if (state.hasNewer) return out;
      if (stream && (stream.text || stream.reasoning)) {
        out.push({
          kind: "stream",
          agentId: stream.agentId,
          text: stream.text,
          reasoning: stream.reasoning,
        });
      }
      for (const input of state.pending)
        out.push({ kind: "pending", id: input.id, text: input.body });
      return out;
    },
    // A reaped agent is shown only when a search hit leads to it.
    current: () => state.agents.get(state.currentId) ?? state.reaped.get(state.currentId),
    async reload() {
      await loadAgents();
      await readApprovals();
      // A window of older history (search): it pages on to the live end by itself.
      if (state.hasNewer) return onChange();
      const agentId = state.currentId;
      const mine = generation;
      // Whatever happened meanwhile: events after the last loaded one, the queued input, the stream.
      const after = lastEventId();
      const rows = await listRecentEvents(db, agentId, { limit: PAGE_SIZE });
      if (mine !== generation) return;
      if (rows.length === PAGE_SIZE && rows[0]!.id > after) {
        // More than a page happened meanwhile: start the view over.
        await controller.view(agentId);
        return;
      }
      addEvents(rows);
      feed?.watchStreams([]);
      feed?.watchStreams([agentId]);
      await refreshPending(agentId);
      onChange();
    },
    refreshApprovals: scheduleApprovals,
    close() {
      clearTimeout(approvalsTimer);
      unsubscribe?.();
    },
  };
  return controller;
}

/**
 * The root started or ended a turn: a request that blocks nothing (a changed instruction file,
 * runtime/file-changes.ts, asked on the root before its model request) may have come with it.
 */
function rootTurned(after: AgentRow, before: AgentRow | undefined, rootId: string): boolean {
  return after.id === rootId && before?.state !== after.state;
}

function asks(agent: AgentRow | undefined): boolean {
  return agent?.activity?.startsWith(ASKING) ?? false;
}

/** The system event answerApproval writes (its data names the request). */
function isApprovalAnswer(event: EventRow): boolean {
  const data = event.data as { approval?: unknown } | null;
  return typeof data?.approval === "number";
}
