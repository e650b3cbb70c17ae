// `warren export TREE`: every agent of a tree with its whole transcript, as Markdown or JSON.
import fs from "node:fs/promises";
import { asc, inArray } from "drizzle-orm";
import type { AgentRow } from "../agents/agents.sql.js";
import { events, type EventRow } from "../agents/events.sql.js";
import { listTree } from "../agents/tree.js";
import type { Db } from "../db/client.js";
import { treeOrder } from "./agent-table.js";
import { expectPositionals, parseCommand, UsageError, type RunCommand } from "./command.js";
import {
  compactNumber,
  createColors,
  jsonText,
  safeLine,
  shortId,
  shownName,
} from "../text/format.js";
import { requireTree, withDatabase } from "./scope.js";
import { renderTranscript } from "./transcript.js";

export const runExport: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommand("export", args, {
    format: { type: "string", default: "md" },
    output: { type: "string", short: "o" },
  });
  expectPositionals(positionals, "export", { required: [], optional: ["TREE"] });
  const format = values.format;
  if (format !== "md" && format !== "json") {
    throw new UsageError(`--format must be md or json, not "${format}"`, "export");
  }
  const text = await withDatabase(io.env, async (db) => {
    const root = await requireTree(db, positionals[0]);
    const entries = await loadTree(db, root);
    return format === "json"
      ? jsonText(
          {
            tree_id: root.id,
            agents: entries.map(({ agent, events }) => ({ ...agent, events })),
          },
          2,
        )
      : renderMarkdown(root, entries);
  });
  if (values.output === undefined) {
    io.out(text);
    return;
  }
  await fs.writeFile(values.output, `${text}\n`);
  io.out(`wrote ${values.output}`);
};

interface ExportEntry {
  agent: AgentRow;
  level: number;
  events: EventRow[];
}

async function loadTree(db: Db, root: AgentRow): Promise<ExportEntry[]> {
  const ordered = treeOrder(await listTree(db, root.id, { includeReaped: true }));
  const ids = ordered.map((entry) => entry.agent.id);
  const rows = ids.length
    ? await db.select().from(events).where(inArray(events.agent_id, ids)).orderBy(asc(events.id))
    : [];
  const byAgent = new Map<string, EventRow[]>(ids.map((id) => [id, []]));
  for (const row of rows) byAgent.get(row.agent_id)?.push(row);
  return ordered.map(({ agent, level }) => ({ agent, level, events: byAgent.get(agent.id)! }));
}

function renderMarkdown(root: AgentRow, entries: ExportEntry[]): string {
  const plain = createColors(false);
  const out = [
    `# warren tree ${shortId(root.id)}`,
    "",
    `Tree id \`${root.id}\`, ${entries.length} agents.`,
  ];
  for (const { agent, level, events } of entries) {
    const heading = "#".repeat(Math.min(6, level + 2));
    const facts = [
      `state ${agent.state}${agent.reaped_at ? " (reaped)" : ""}`,
      `turns ${agent.turns}`,
      `tool calls ${agent.tool_calls}`,
      `tokens ${compactNumber(agent.input_tokens)} in (${compactNumber(agent.cached_tokens)} cached) / ` +
        `${compactNumber(agent.output_tokens)} out (${compactNumber(agent.reasoning_tokens)} reasoning)`,
      `created ${agent.created_at.toISOString()}`,
    ];
    if (agent.model) facts.push(`model ${safeLine(agent.model)}`);
    out.push(
      "",
      `${heading} ${shownName(agent)}`,
      "",
      `\`${agent.id}\` · ${facts.join(" · ")}`,
      "",
    );
    if (events.length === 0) {
      out.push("_(no events)_");
      continue;
    }
    const body = renderTranscript(events, { color: plain, full: true }).join("\n");
    // A fence longer than any backtick run inside, so transcripts holding code blocks stay intact.
    const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
    const fence = "`".repeat(Math.max(3, longest + 1));
    out.push(`${fence}text`, body, fence);
  }
  return out.join("\n");
}
