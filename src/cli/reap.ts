// `warren reap`: removes a tree's dead agents from navigation; their history stays in the database.
import { reapDead } from "../agents/tree.js";
import { expectPositionals, parseCommandArgs, type RunCommand } from "./command.js";
import { shortId } from "../text/format.js";
import { requireTree, withDatabase } from "./scope.js";

export const runReap: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandArgs("reap", {
    args,
    allowPositionals: true,
    options: { tree: { type: "string" } },
  });
  expectPositionals(positionals, "reap", { required: [] });
  await withDatabase(io.env, async (db) => {
    const root = await requireTree(db, values.tree);
    const reaped = await reapDead(db, root.id);
    const n = reaped.length;
    io.out(`reaped ${n} dead agent${n === 1 ? "" : "s"} in tree ${shortId(root.id)}`);
  });
};
