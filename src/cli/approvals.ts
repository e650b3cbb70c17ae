// `warren approvals`, `warren approve ID`, `warren deny ID`: the requests of tool calls the
// policy marks `ask`, listed and answered from a script or another terminal (the first answer
// wins, whether it comes from here or a TUI).
import { answerApproval, listPending } from "../approvals/approvals.js";
import { shownArguments } from "../approvals/shown.js";
import { FILE_CHANGE_TOOL } from "../config/accepted-files.js";
import { shownTreeRule } from "../policy/tree-rules.js";
import { escapeLine, visibleText } from "../text/escape.js";
import {
  expectPositionals,
  parseCommandLine,
  parseCommandArgs,
  TREE_OPTION,
  JSON_OPTION,
  UsageError,
  type RunCommand,
} from "./command.js";
import { jsonText } from "../text/format.js";
import { withDatabase, treeOrLatest } from "./scope.js";

const ARG_INDENT = "      ";
const VALUE_INDENT = "        ";

/** A name or key on one line, every character shown. */
function oneLine(text: string): string {
  return visibleText(text).join("");
}

export const runApprovals: RunCommand = async (args, io) => {
  const { values } = parseCommandLine("approvals", [], args, {
    ...TREE_OPTION,
    all: { type: "boolean", default: false },
    ...JSON_OPTION,
  });
  if (values.all && values.tree !== undefined) {
    throw new UsageError("--all and --tree exclude each other", "approvals");
  }
  await withDatabase(io.env, async (db) => {
    const root = values.all ? undefined : await treeOrLatest(db, values.tree);
    const pending = values.all || root ? await listPending(db, root?.id) : [];
    if (values.json) {
      io.out(
        jsonText(
          pending.map((p) => ({
            id: p.id,
            tree_id: p.tree_id,
            agent_id: p.agent_id,
            agent: p.agent_name,
            tool: p.tool,
            subject: p.subject,
            arguments: p.arguments,
            pattern: p.pattern,
            created_at: p.created_at,
          })),
        ),
      );
      return;
    }
    if (pending.length === 0) {
      io.out("no approval requests are waiting");
      return;
    }
    for (const p of pending) {
      io.out(`${p.id}  ${oneLine(p.agent_name)} ${p.agent_id.slice(0, 8)}  ${oneLine(p.tool)}`);
      // Every argument of the call, every character shown (the subject is only what the policy
      // matched): a real newline ends its line with ⏎, an invisible or look-alike character is
      // its code (text/escape.ts visibleLines). Continuation lines sit deeper than the keys.
      const args =
        p.tool === FILE_CHANGE_TOOL
          ? [{ key: "change", value: p.subject }]
          : shownArguments(p.arguments);
      if (args.length === 0) io.out(`${ARG_INDENT}(no arguments)`);
      for (const arg of args) {
        const [first, ...rest] = visibleText(arg.value);
        io.out(`${ARG_INDENT}${oneLine(arg.key)}: ${first}`);
        for (const line of rest) io.out(`${VALUE_INDENT}${line}`);
      }
      // The rule `warren approve --tree-wide` would store (none when the command hides things).
      const rule = shownTreeRule(p.pattern);
      io.out(
        `      --tree-wide would allow: ${rule ? escapeLine(rule) : "nothing (allow once only)"}`,
      );
    }
  });
};

/** `warren approve` (allow) and `warren deny`. */
function answerCommand(allow: boolean): RunCommand {
  const name = allow ? "approve" : "deny";
  return async (args, io) => {
    const { values, positionals } = parseCommandArgs(name, {
      args,
      allowPositionals: true,
      options: allow
        ? { "tree-wide": { type: "boolean", default: false } }
        : { reason: { type: "string" } },
    });
    expectPositionals(positionals, name, { required: ["ID"] });
    const id = Number(positionals[0]);
    if (!Number.isSafeInteger(id) || id <= 0) {
      throw new UsageError(`ID must be a request number from warren approvals`, name);
    }
    await withDatabase(io.env, async (db) => {
      const row = await answerApproval(db, id, {
        allow,
        scope: values["tree-wide"] === true ? "tree" : "once",
        reason: typeof values.reason === "string" ? values.reason : undefined,
        by: "person (cli)",
      });
      const what = row.subject ? `${row.tool}: ${row.subject}` : row.tool;
      const how = allow
        ? row.scope === "tree"
          ? `allowed "${escapeLine(shownTreeRule(row.pattern))}" for the tree`
          : "allowed"
        : "denied";
      io.out(`${how} request ${row.id} (${escapeLine(what)})`);
    });
  };
}

export const runApprove = answerCommand(true);
export const runDeny = answerCommand(false);
