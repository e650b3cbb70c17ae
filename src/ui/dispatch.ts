// What a key does: the input editor takes the editing keys, the key table (key-actions.ts) names
// the action for the rest, and this performs it on the view state, the controller and the actions.
import { listTurns, notUndone } from "../agents/rewind.js";
import type { Db } from "../db/client.js";
import { searchTree, type SearchHit } from "../search/search.js";
import type { Actions } from "./actions.js";
import { completeInput } from "./completion.js";
import type { Controller } from "./controller.js";
import { describeFailure } from "./failure.js";
import type { FrameClock } from "./frame.js";
import { createInputHistory, type InputEditor, type InputHistory } from "./input-editor.js";
import { editorSees, keyAction, type KeyAction, type KeyState } from "./key-actions.js";
import { MOUSE_OFF, MOUSE_ON, type KeyEvent } from "./keys.js";
import type { Layout } from "./layout.js";
import { openRewindPicker, rewindPickerKey, type RewindPicker } from "./rewind-picker.js";
import { searchKey } from "./search.js";
import { foldAtHand, type ViewEvent, type ViewState } from "./view-state.js";
import { NEED_TEXT, nextNeeding } from "./views/agent-filter.js";
import { approvalFits, approvalRoom } from "./views/approvals.js";
import { approvalMarks, navigate, type Direction } from "./views/index.js";

/** A second Ctrl+C within this quits; flashes last this long unless told otherwise. */
export const QUIT_WINDOW_MS = 2000;

const NO_TARGET: Record<Direction, string> = {
  parent: "no parent",
  child: "no children",
  prev: "no siblings",
  next: "no siblings",
};

export interface DispatchOptions {
  db: Db;
  rootId: string;
  controller: Controller;
  actions: Actions;
  editor: InputEditor;
  layout: Layout;
  stdout: NodeJS.WriteStream;
  clock: FrameClock;
  view: () => ViewState;
  /** Changes the view state and asks for a frame. */
  update: (event: ViewEvent) => void;
  /** Runs an async action; a failure becomes a notice. */
  spawn: (action: () => Promise<unknown>) => Promise<unknown>;
  quit: () => void;
}

export interface Dispatch {
  key(event: KeyEvent): void;
  /** /search TEXT: the result list opens at once and fills when the query answers. */
  startSearch(query: string): void;
  /** /rewind: the picker opens at once and lists the agent's turns when they are read. */
  startRewind(agentId: string, agentName: string): void;
}

export function createDispatch(options: DispatchOptions): Dispatch {
  const { controller, actions, editor, update } = options;
  const histories = new Map<string, InputHistory>();
  const drafts = new Map<string, string>();
  /** The chain of submitted lines and commands: they run in the order typed. */
  let submitted: Promise<unknown> = Promise.resolve();

  const currentId = () => controller.state.currentId;
  const historyOf = (agentId: string) => {
    let history = histories.get(agentId);
    if (!history) histories.set(agentId, (history = createInputHistory()));
    return history;
  };

  const flash = (text: string, ms = QUIT_WINDOW_MS) => {
    update({ type: "flash", text, until: Date.now() + ms });
    options.clock.requestIn(ms + 10);
  };

  /** Each agent keeps its own unsent draft. */
  const switchDraft = (agentId: string) => {
    if (agentId === currentId()) return;
    drafts.set(currentId(), editor.value());
    editor.set(drafts.get(agentId) ?? "");
    drafts.delete(agentId);
  };

  const go = (agentId: string | undefined) => {
    if (!agentId || agentId === currentId()) return;
    update({ type: "scroll-to", scroll: 0 });
    switchDraft(agentId);
    void options.spawn(() => controller.view(agentId));
  };

  const move = (direction: Direction) => {
    const target = navigate([...controller.state.agents.values()], currentId(), direction);
    if (target) go(target);
    else flash(NO_TARGET[direction], 1200);
  };

  /** The jump key: to the agent whose request is the tree's oldest. */
  const goToOldestRequest = () => {
    const oldest = controller.state.approvals[0];
    if (!oldest) return flash("no approval requests", 1200);
    go(oldest.agent_id);
  };

  /** The next agent (in the panel's order, after the viewed one) that needs the person. */
  const goToNextNeeding = () => {
    const state = controller.state;
    const agents = [...state.agents.values()];
    const marks = approvalMarks(agents, state.approvals);
    const next = nextNeeding(agents, state.currentId, state.needs, marks);
    if (!next) return flash("no agent needs you", 1200);
    flash(`${next.agent.name}: ${NEED_TEXT[next.need]}`, 2000);
    go(next.agent.id);
  };

  const startSearch = (query: string) => {
    update({ type: "search-open", query });
    const seq = options.view().searchSeq;
    searchTree(options.db, options.rootId, query).then(
      (hits) => update({ type: "search-answer", seq, hits }),
      (error: unknown) =>
        update({
          type: "search-answer",
          seq,
          hits: [],
          error: `search failed: ${describeFailure(error)}`,
        }),
    );
  };

  /** Enter on a hit: its agent's history around the event, scrolled to it once loaded. */
  const jumpTo = (hit: SearchHit) => {
    switchDraft(hit.agent_id);
    update({ type: "jump", agentId: hit.agent_id, eventId: hit.event_id });
    void options.spawn(() => controller.view(hit.agent_id, hit.event_id));
  };

  const onSearchKey = (key: KeyEvent) => {
    if (options.view().tasksOpen) {
      // The board only shows: Escape (or Ctrl+C) closes it.
      if (key.type === "key" && (key.name === "escape" || (key.ctrl && key.name === "c"))) {
        update({ type: "tasks-close" });
      }
      return;
    }
    const search = options.view().search;
    if (!search) return;
    const page = Math.max(1, options.layout.panelSize().height - 1);
    const { state, action } = searchKey(search, key, page);
    update({ type: "search-set", search: action.type === "close" ? undefined : state });
    if (action.type === "jump") jumpTo(action.hit);
  };

  /** Changes the open picker, if it is still the one for `agentId` (a read may answer late). */
  const changeRewind = (agentId: string, change: (picker: RewindPicker) => RewindPicker) => {
    const picker = options.view().rewind;
    if (picker?.agentId === agentId) update({ type: "rewind-set", rewind: change(picker) });
  };

  /** The turns are read once, here: the frames draw what was read. */
  const startRewind = (agentId: string, agentName: string) => {
    update({ type: "rewind-set", rewind: openRewindPicker(agentId, agentName) });
    listTurns(options.db, agentId).then(
      (turns) => changeRewind(agentId, (p) => ({ ...p, turns: turns.reverse() })),
      (error: unknown) =>
        changeRewind(agentId, (p) => ({
          ...p,
          turns: [],
          error: `reading the turns failed: ${describeFailure(error)}`,
        })),
    );
  };

  const onRewindKey = (key: KeyEvent) => {
    const picker = options.view().rewind;
    if (!picker) return;
    const page = Math.max(1, options.layout.panelSize().height - 1);
    const { state, action } = rewindPickerKey(picker, key, page);
    const closing = action.type === "close" || action.type === "rewind";
    update({ type: "rewind-set", rewind: closing ? undefined : state });
    if (action.type === "ask") {
      // What the rewind will not undo, read once for the confirmation.
      notUndone(options.db, picker.agentId, action.turn.startEvent).then(
        // Unless the person went back meanwhile.
        (kept) =>
          changeRewind(picker.agentId, (p) =>
            p.step === "choice" && p.choice === state.choice && p.selected === state.selected
              ? { ...p, step: "confirm", notUndone: kept }
              : p,
          ),
        (error: unknown) =>
          changeRewind(picker.agentId, (p) => ({ ...p, error: describeFailure(error) })),
      );
    }
    if (action.type === "rewind") {
      const ask = { agentId: picker.agentId, turn: action.turn.turn, mode: action.mode };
      void options.spawn(() => actions.rewind(ask));
    }
  };

  /** A fold of rewound events opens or shuts (views/rewound-fold.ts). */
  const toggleFold = (key: number | undefined) => {
    if (key !== undefined) update({ type: "fold-toggle", key });
  };

  const complete = async () => {
    const result = await completeInput(
      editor.value(),
      () => actions.modelNames(),
      actions.personCommands(),
    );
    if (result.text !== undefined) editor.set(result.text);
    if (result.hint) flash(result.hint, 3000);
    options.clock.request();
  };

  const submit = () => {
    const text = editor.value();
    // Enter on an empty input: the lowest fold of rewound events on the screen opens or shuts.
    if (!text.trim()) return toggleFold(foldAtHand(options.view()));
    historyOf(currentId()).add(text);
    editor.clear();
    update({ type: "scroll-to", scroll: 0 });
    // In the order typed: a captured line is saved before the /fork typed after it reads it.
    submitted = submitted.then(() =>
      options.spawn(async () => {
        // A message that could not be saved goes back into the input: nothing typed is lost.
        if (!(await actions.submit(text)) && editor.isEmpty()) {
          editor.set(text);
          options.clock.request();
        }
      }),
    );
  };

  /** The viewed agent's oldest open request. */
  const askingHere = () => controller.state.approvals.find((a) => a.agent_id === currentId());

  const keyState = (): KeyState => {
    const view = options.view();
    return {
      focus: view.rewind
        ? "rewind"
        : view.panel
          ? "panel"
          : view.search || view.tasksOpen
            ? "search"
            : "input",
      panelFiltered: (view.panel?.filter ?? "") !== "",
      denying: view.denying !== undefined,
      answering:
        askingHere() !== undefined &&
        // A request taller than the screen is not shown whole: its keys are off.
        approvalFits(
          controller.state.approvals.filter((a) => a.agent_id === currentId()),
          options.layout.width(),
          approvalRoom(options.layout.height()),
        ) &&
        editor.isEmpty() &&
        view.denying === undefined &&
        actions.mode === "normal",
      quitArmed: Date.now() - view.lastCtrlC < QUIT_WINDOW_MS,
      page: Math.max(1, options.layout.height() - 8),
    };
  };

  function perform(action: KeyAction): void {
    switch (action.type) {
      case "none":
        return;
      case "view":
        return update(action.event);
      case "search-key":
        return onSearchKey(action.key);
      case "rewind-key":
        return onRewindKey(action.key);
      case "click":
        return toggleFold(options.view().foldRows[action.row]);
      case "quit":
        return options.quit();
      case "interrupt":
        if (action.by === "ctrl-c") {
          update({ type: "ctrl-c", at: Date.now() });
          void options.spawn(() => actions.interrupt());
          return flash("Ctrl+C again to quit");
        }
        void options.spawn(async () => {
          if (!(await actions.interrupt())) flash("nothing to interrupt", 1200);
        });
        return;
      case "stop":
        void options.spawn(() => actions.stop());
        return;
      case "move":
        return move(action.direction);
      case "open-panel":
        return update({ type: "panel-open", selected: currentId() });
      case "go-selected": {
        const selected = options.view().panel?.selected;
        update({ type: "panel-close" });
        return go(selected);
      }
      case "oldest-request":
        update({ type: "panel-close" });
        return goToOldestRequest();
      case "next-needing":
        update({ type: "panel-close" });
        return goToNextNeeding();
      case "search-prompt": {
        // The search prompt: text already typed becomes the query.
        const typed = editor.value();
        if (!/^\s*\/search\b/.test(typed)) editor.set(`/search ${typed.trimStart()}`);
        return flash("Enter searches every agent's transcript in this tree", 3000);
      }
      case "toggle-mouse":
        update({ type: "mouse-toggle" });
        options.stdout.write(options.view().mouseOn ? MOUSE_ON : MOUSE_OFF);
        return;
      case "redraw":
        return options.layout.redraw();
      case "submit":
        return submit();
      case "complete":
        void options.spawn(complete);
        return;
      case "history": {
        const history = historyOf(currentId());
        const text = action.direction === "older" ? history.older(editor.value()) : history.newer();
        if (text !== undefined) editor.set(text);
        return;
      }
      case "answer": {
        const request = askingHere();
        if (request)
          void options.spawn(() => actions.answer(request.id, true, { tree: action.tree }));
        return;
      }
      case "deny-start": {
        const request = askingHere();
        if (request) update({ type: "deny-start", id: request.id });
        return;
      }
      case "deny-cancel":
        update({ type: "deny-end" });
        return editor.clear();
      case "deny-send": {
        const id = options.view().denying;
        const reason = editor.value().trim();
        update({ type: "deny-end" });
        editor.clear();
        if (id !== undefined)
          void options.spawn(() => actions.answer(id, false, reason ? { reason } : {}));
        return;
      }
    }
  }

  return {
    key(event) {
      const state = keyState();
      if (!(editorSees(event, state) && options.editor.handleKey(event))) {
        perform(keyAction(event, state));
      }
      options.clock.requestNow();
    },
    startSearch,
    startRewind,
  };
}
