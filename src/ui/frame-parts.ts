// The parts of a frame around the scrollback, from state: the status layer, the bars (separator
// and status bar), the input's prompt and the dead agent's input line. Pure: state in, lines out.
import type { AgentRow } from "../agents/agents.sql.js";
import { agentCost, treeCost, type Pricing } from "../agents/cost.js";
import type { CounterRow } from "../agents/totals.js";
import type { Prompt } from "./input-editor.js";
import {
  navInfo,
  renderSeparator,
  renderStatusBar,
  renderStatusLayer,
  treeTokens,
  type Line,
  type NavInfo,
  type Theme,
} from "./views/index.js";
import type { TreeFigures } from "./tree-figures.js";
import type { TaskCounts } from "./views/status-bar.js";
import { GLYPH } from "./views/glyphs.js";
import { paint, ROLE, type Style } from "./views/theme.js";

/**
 * One line per awaited agent while the viewed agent waits on several; none otherwise. With `rows`
 * (the room the layout gives the layer), a longer wait shows its first agents and a last line
 * counting the rest, so a fan-in of 200 builds only what fits on the screen.
 */
export function renderWaitLayer(current: AgentRow, ...layer: StatusLayerView): Line[] {
  const waiting = current.wait_status;
  if (!waiting || waiting.length === 0) return [];
  return renderStatusLayer(waiting, ...layer);
}

/** renderStatusLayer's parameters after the entries: the agents, clock, width, theme, marks, rows. */
type StatusLayerView =
  Parameters<typeof renderStatusLayer> extends [unknown, ...infer View] ? View : never;

export interface BarsInput {
  agents: readonly AgentRow[];
  /** Reaped agents (gone from navigation): their tokens still count in the tree's total. */
  reaped?: Iterable<CounterRow & { model?: string | null }>;
  root: AgentRow;
  current: AgentRow;
  mode: "normal" | "capture" | "dead";
  keysHint: string;
  /** Shown instead of `keysHint` when the bar is narrow (none for a flashed line). */
  keysHintShort?: string;
  problem: string | undefined;
  /** The tree's open approval requests (the status bar shows the count and the key). */
  approvals?: number;
  tasks?: TaskCounts;
  /** The config's prices: the agent's and the tree's cost beside their tokens (when priced). */
  pricing?: Pricing;
  width: number;
  theme: Theme;
  /**
   * The tree-wide figures and the separator's neighbours when the caller keeps them (the painter
   * does, per tree version: tree-figures.ts); else they are derived from `agents` and `reaped`.
   */
  figures?: Pick<TreeFigures, "counts" | "tokens" | "cost">;
  nav?: NavInfo | undefined;
}

/** The separator (where you are in the tree) and the status bar. */
export function renderBars(input: BarsInput): { separator: Line; statusBar: Line } {
  const { agents, current, width, theme } = input;
  const nav = (input.figures ? input.nav : navInfo(agents, current.id)) ?? {
    current,
    children: 0,
  };
  let counts = input.figures?.counts;
  if (!counts) {
    counts = { running: 0, waiting: 0, idle: 0, dead: 0 };
    for (const agent of agents) counts[agent.state]++;
  }
  const everyone = input.figures ? [] : [...agents, ...(input.reaped ?? [])];
  const cost =
    input.pricing &&
    (input.figures
      ? withTree(agentCost(current, input.pricing.prices, input.pricing.model), input.figures.cost)
      : costs(current, everyone, input.pricing));
  return {
    separator: renderSeparator(nav, width, theme),
    statusBar: renderStatusBar(
      {
        root: input.root,
        current,
        counts,
        tokens: Number(current.input_tokens) + Number(current.output_tokens),
        tree: input.figures?.tokens ?? treeTokens(everyone),
        ...(cost ? { cost } : {}),
        mode: input.mode,
        keysHint: input.keysHint,
        ...(input.keysHintShort ? { keysHintShort: input.keysHintShort } : {}),
        ...(input.problem ? { problem: input.problem } : {}),
        ...(input.approvals ? { approvals: { count: input.approvals, key: "^G" } } : {}),
        ...(input.tasks ? { tasks: input.tasks } : {}),
      },
      width,
      theme,
    ),
  };
}

/** The cost of the agent and of its tree (reaped agents included), each when priced. */
function costs(
  current: AgentRow,
  everyone: (CounterRow & { model?: string | null })[],
  { prices, model }: Pricing,
): { agent?: number; tree?: number } {
  const agent = agentCost(current, prices, model);
  const tree = treeCost(
    everyone.map((row) => ({ ...row, model: row.model ?? null })),
    prices,
    model,
  );
  return withTree(agent, tree);
}

function withTree(agent: number | undefined, tree: number | undefined) {
  return { ...(agent !== undefined ? { agent } : {}), ...(tree !== undefined ? { tree } : {}) };
}

/** The status bar's right side when nothing is flashed there. */
export function keysHint(scroll: number, mouseOn: boolean): string {
  return `${scrolledText(scroll)}^T agents · ^O mouse ${mouseOn ? "on" : "off (select text)"} · /help`;
}

/** The keys hint in a narrow status bar: the panel key and /help, which lists the rest. */
export function shortKeysHint(scroll: number): string {
  return `${scrolledText(scroll)}^T agents · /help`;
}

function scrolledText(scroll: number): string {
  return scroll > 0 ? `↑${scroll} lines · ` : "";
}

/** The input's prompt: it says when typed lines are captured, not sent. */
export function promptFor(mode: "normal" | "capture", dead: boolean, theme: Theme): Prompt {
  const prompt = (text: string, style: Style): Prompt => ({
    text,
    painted: paint(theme, text, style),
  });
  if (dead) return prompt(`${GLYPH.dead} `, ROLE.dead);
  if (mode === "capture")
    return prompt(`${GLYPH.capture} capture ${GLYPH.selected} `, ROLE.capturePrompt);
  return prompt(`${GLYPH.user} `, ROLE.prompt);
}

/** What the input shows for a dead agent (commands still work there). */
export function deadInputLine(theme: Theme): Line {
  return paint(
    theme,
    "✗ dead agent: no input — commands only (/reap, /kill …); Ctrl+↑ parent",
    ROLE.faint,
  );
}
