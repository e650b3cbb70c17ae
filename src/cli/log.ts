// `warren log AGENT`: an agent's transcript, rendered like the TUI's scrollback or as JSON.
import { listEvents } from "../agents/events.js";
import { paintState } from "./agent-table.js";
import { parseCommandLine, TREE_OPTION, JSON_OPTION, type RunCommand } from "./command.js";
import { jsonText, shortId, shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";
import { renderTranscript } from "./transcript.js";

export const runLog: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandLine("log", ["AGENT"], args, {
    ...TREE_OPTION,
    full: { type: "boolean", default: false },
    ...JSON_OPTION,
  });
  await withDatabase(io.env, async (db) => {
    const agent = await resolveAgent(db, positionals[0]!, values.tree);
    const events = await listEvents(db, agent.id);
    if (values.json) {
      io.out(jsonText(events, 2));
      return;
    }
    const state = paintState(agent.state, io.color)(agent.state);
    io.out(`${io.color.bold(shownName(agent))} · ${state} · tree ${shortId(agent.tree_id)}`);
    if (events.length === 0) {
      io.out(io.color.dim("(no events yet)"));
      return;
    }
    io.out("");
    for (const line of renderTranscript(events, { color: io.color, full: values.full })) {
      io.out(line);
    }
  });
};
