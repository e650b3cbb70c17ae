// Telling the person what happens where they are not looking: the terminal's title carries the
// tree's counts (running, needing you), and a bell with an OSC 9 notification (shown as a desktop
// notification by terminals that support it, ignored by the rest) when an agent they are not
// viewing finishes, fails or asks for approval. Off with `notify: false` in the config.
import type { AgentRow } from "../agents/agents.sql.js";
import type { PendingApproval } from "../approvals/approvals.js";
import { NEED_TEXT, type Need } from "./views/agent-filter.js";

export interface NotifyState {
  agents: ReadonlyMap<string, AgentRow>;
  currentId: string;
  needs: ReadonlyMap<string, Exclude<Need, "approval">>;
  approvals: readonly PendingApproval[];
}

/** "warren · 2 running · 1 needs you" — plain text, no escapes (names are not in it). */
export function titleFor(state: NotifyState): string {
  let running = 0;
  for (const a of state.agents.values()) {
    if (a.state === "running" || a.state === "waiting") running++;
  }
  const needing = new Set([...state.needs.keys(), ...state.approvals.map((a) => a.agent_id)]);
  const parts = ["warren", `${running} running`];
  if (needing.size > 0) parts.push(`${needing.size} need${needing.size === 1 ? "s" : ""} you`);
  return parts.join(" · ");
}

/** The agents newly needing the person since `seen`, with what they need; `seen` is updated. */
export function newNeeds(
  state: NotifyState,
  seen: Map<string, Need>,
): { agentId: string; need: Need }[] {
  const now = new Map<string, Need>(state.needs);
  for (const a of state.approvals) now.set(a.agent_id, "approval");
  const fresh: { agentId: string; need: Need }[] = [];
  for (const [agentId, need] of now) {
    if (agentId !== state.currentId && seen.get(agentId) !== need) fresh.push({ agentId, need });
  }
  seen.clear();
  for (const [id, need] of now) seen.set(id, need);
  return fresh;
}

/** An OSC 9 notification with `text` (control characters removed, so names cannot end it). */
export function osc9(text: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\x00-\x1f\x7f-\x9f]/g, " ").slice(0, 200);
  return `\x1b]9;${clean}\x07`;
}

export interface Notifier {
  /** Called after every change: sets the title when it changed, alerts on new needs. */
  update(state: NotifyState): void;
}

export function createNotifier(options: {
  enabled: boolean;
  setTitle(title: string): void;
  /** Rings the terminal's bell (BEL). */
  bell(): void;
  /** Writes an OSC sequence to the terminal (through tmux's passthrough inside tmux). */
  osc(sequence: string): void;
}): Notifier {
  let title = "";
  let primed = false;
  const seen = new Map<string, Need>();
  return {
    update(state) {
      if (!options.enabled) return;
      const next = titleFor(state);
      if (next !== title) options.setTitle((title = next));
      const fresh = newNeeds(state, seen);
      // What needed the person before the TUI opened is shown, not rung.
      if (!primed) {
        primed = true;
        return;
      }
      if (fresh.length === 0) return;
      const first = fresh[0]!;
      const name = state.agents.get(first.agentId)?.name ?? first.agentId.slice(0, 8);
      const more = fresh.length > 1 ? ` (+${fresh.length - 1} more)` : "";
      options.bell();
      options.osc(osc9(`warren: ${name} ${NEED_TEXT[first.need]}${more}`));
    },
  };
}
