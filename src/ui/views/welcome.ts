// The first screen of an agent with no history: which model on which server, the working
// directory, the tree, and how to begin. Not an event: it is drawn while the agent has none, so
// the first message replaces it.
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
  /** The instruction files the agent reads, as one line (instructionFilesLine). */
  instructions?: string;
  /** Agent files that could not be used, one line each (`FILE:LINE: why`). */
  warnings?: string[];
  /** How many agents the tree has. */
  agents: number;
  panelKey: string;
  /** One line each: database, sandbox, model server (runtime/health.ts), once known. */
  checks?: { label: string; ok: boolean; text: string }[];
  /** MCP servers configured (shown when there are any). */
  mcpServers?: number;
  /** A project .mcp.json waiting for the person's allow, as one line (mcp/project.ts). */
  mcpWaiting?: string;
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
    ...(info.instructions
      ? [
          [
            "reads",
            [{ text: cleanText(info.instructions.replace(/^instructions: /, ""), false) }],
          ] as [string, Span[]],
        ]
      : []),
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
  if (info.mcpServers) {
    const n = info.mcpServers;
    facts.push([
      "mcp",
      [{ text: `${n} server${n === 1 ? "" : "s"} configured ${GLYPH.dot} /mcp lists their tools` }],
    ]);
  }
  if (info.mcpWaiting) {
    facts.push(["mcp", [{ text: cleanText(info.mcpWaiting, false), style: ROLE.warn }]]);
  }
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
    ...facts.map(([label, value]): Row => [
      { text: `  ${label.padEnd(11)}`, style: ROLE.faint },
      ...value,
    ]),
    [],
    ...hints.flatMap((hint) => wrapSpans([{ text: "  " }, ...hint], width, 4)),
  ];
  for (const warning of info.warnings ?? []) {
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
