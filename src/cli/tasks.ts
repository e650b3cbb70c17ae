// `warren tasks [--tree ID] [--json]`: the task board of a tree (default: the most recent).
import { listTasks } from "../tasks/board.js";
import { renderTaskBoard } from "../tasks/render.js";
import { jsonText } from "../text/format.js";
import { parseCommandLine, TREE_OPTION, JSON_OPTION, type RunCommand } from "./command.js";
import { treeOrLatest, withDatabase } from "./scope.js";

export const runTasks: RunCommand = async (args, io) => {
  const { values } = parseCommandLine("tasks", [], args, {
    ...TREE_OPTION,
    ...JSON_OPTION,
  });
  await withDatabase(io.env, async (db) => {
    const root = await treeOrLatest(db, values.tree);
    const tasks = root ? await listTasks(db, root.id) : [];
    if (values.json) {
      io.out(jsonText({ tree_id: root?.id ?? null, tasks }, 2));
      return;
    }
    if (!root) {
      io.out("there are no trees yet; run `warren` to start one");
      return;
    }
    for (const line of renderTaskBoard(tasks, process.stdout.columns || 100)) io.out(line);
  });
};
