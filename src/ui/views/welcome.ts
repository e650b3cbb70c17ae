// The first screen of an agent with no history: which model on which server, the working
// directory, what of the person's setup was read (runtime/setup-sources.ts) and what was not, the
// tree, and how to begin. Every line wraps at the terminal's width, never cut: a warning's end
// (how to allow, the cause) is its point. Not an event: it is drawn while the agent has no
// events, with notices below it (painter.ts), so the first message replaces it.
import type { SetupSource } from "../../runtime/setup-sources.js";
import { sourceText } from "../../runtime/setup-sources.js";
import { shortId } from "../../text/format.js";
import { GLYPH } from "./glyphs.js";
import { nameText } from "./agent-text.js";
import { clipRow, wrapSpans, type Row } from "./spans.js";
import { cleanText, paintSpans, ROLE, type Line, type Span, type Theme } from "./theme.js";

export interface WelcomeInfo {
  agent: { id: string; name: string; tree_id: string; model: string | null; cwd: string | null };
  /** The model's name from the configuration (when the agent has none of its own). */
  model?: string;
  /** The model server's base URL; undefined = OpenAI's. */
  baseURL?: string;
  /** Why no turn can run yet (no model configured), if so. */
  problem?: string;
  /** What of the person's setup was read, kind by kind, with its warnings (setupSources). */
  sources?: SetupSource[];
  /** What could not be used, one line each (the config's warnings: `FILE:LINE: why`, …). */
  warnings?: string[];
  /** How many agents the tree has. */
  agents: number;
  panelKey: string;
  /** One line each: database, sandbox, model server (runtime/health.ts), once known. */
  checks?: { label: string; ok: boolean; text: string }[];
}

export function renderWelcome(info: WelcomeInfo, width: number, theme: Theme): Line[] {
  const { agent } = info;
  const model = agent.model ?? info.model;
  const facts: [string, Span[]][] = [
    [
      "model",
      model
        ? [
            { text: cleanText(model, false), style: ROLE.model },
            { text: ` on ${serverText(info.baseURL)}` },
          ]
        : [{ text: "none configured", style: ROLE.warn }],
    ],
    ["directory", [{ text: cleanText(agent.cwd ?? "?", false) }]],
    ...(info.sources ?? []).map((source): [string, Span[]] => [
      source.short ?? source.label,
      [{ text: cleanText(sourceText(source), false) }],
    ]),
    [
      "tree",
      [
        { text: `${nameText(agent.name, 32)} ${shortId(agent.id)}`, style: ROLE.strong },
        {
          text: ` in tree ${shortId(agent.tree_id)} ${GLYPH.dot} ${info.agents} agent${info.agents === 1 ? "" : "s"}`,
        },
      ],
    ],
    ...(info.checks ?? []).map((check): [string, Span[]] => [
      check.label === "model server" ? "server" : check.label,
      [{ text: cleanText(check.text, false), ...(check.ok ? {} : { style: ROLE.warn }) }],
    ]),
  ];
  const key = (text: string): Span => ({ text, style: ROLE.prompt });
  const hints: Span[][] = [
    [key("Enter"), { text: " sends what you type to this agent (Shift+Enter: a new line)" }],
    [
      key("/capture"),
      { text: " then " },
      key("/fork"),
      { text: ": write down a task without a model seeing it, and hand it to a child agent" },
    ],
    [
      key(info.panelKey),
      { text: " the agents of the tree " },
      { text: GLYPH.dot, style: ROLE.faint },
      { text: " " },
      key("/help"),
      { text: " keys and commands" },
    ],
  ];
  const rows: Row[] = [
    [
      { text: "warren", style: ROLE.strong },
      { text: ` ${GLYPH.dash} a tree of agents`, style: ROLE.faint },
    ],
    [],
    ...facts.flatMap(([label, value]) =>
      wrapSpans([{ text: `  ${label.padEnd(10)} `, style: ROLE.faint }, ...value], width, 13),
    ),
    [],
    ...hints.flatMap((hint) => wrapSpans([{ text: "  " }, ...hint], width, 4)),
  ];
  const warnings = [
    ...(info.sources ?? []).flatMap((source) => source.warnings),
    ...(info.warnings ?? []),
  ];
  for (const warning of warnings) {
    rows.push(
      ...wrapSpans(
        [{ text: `  ${GLYPH.warning} ${cleanText(warning, false)}`, style: ROLE.warn }],
        width,
        4,
      ),
    );
  }
  if (info.problem) {
    rows.push(
      [],
      ...wrapSpans([{ text: `  ${GLYPH.warning} ${info.problem}`, style: ROLE.warn }], width, 4),
    );
  }
  return rows.map((row) => paintSpans(theme, clipRow(row, width)));
}

/** The server as a host (and port): "api.openai.com" without a base URL. */
function serverText(baseURL: string | undefined): string {
  if (!baseURL) return "api.openai.com";
  try {
    return cleanText(new URL(baseURL).host, false);
  } catch {
    return cleanText(baseURL, false);
  }
}
