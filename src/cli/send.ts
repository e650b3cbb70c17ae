// `warren send AGENT MESSAGE`: mail from the person (shown to agents as `human`).
import { sendMail } from "../mail/send.js";
import { parseCommandArgs, UsageError, type Command } from "./command.js";
import { shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const send: Command = {
  name: "send",
  summary: "send mail to an agent from you (shown as human)",
  usage: `Usage: warren send AGENT MESSAGE... [--tree ID]

Send mail to an agent from you; agents see the sender as "human". An idle agent wakes
and starts a turn with it. Several MESSAGE words are joined with spaces; "-" reads
the message from stdin. AGENT is resolved as for \`warren log\`.

Options:
  --tree ID   resolve AGENT within this tree (a root's id or a unique prefix of it)
  -h, --help  show this help`,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs("send", {
      args,
      allowPositionals: true,
      options: { tree: { type: "string" } },
    });
    const [ref, ...words] = positionals;
    if (ref === undefined) throw new UsageError("missing AGENT", "send");
    if (words.length === 0) throw new UsageError("missing MESSAGE", "send");
    const message = words.length === 1 && words[0] === "-" ? await readStdin() : words.join(" ");
    if (!message.trim()) throw new UsageError("the message is empty", "send");
    await withDatabase(io.env, async (db) => {
      const agent = await resolveAgent(db, ref, values.tree);
      const receipt = await sendMail(db, {
        treeId: agent.tree_id,
        fromId: null,
        toId: agent.id,
        body: message,
      });
      io.out(`sent mail #${receipt.mailId} to ${shownName(agent)}`);
    });
  },
};

/** The whole of stdin (a file, a pipe or a socket; opening /dev/stdin fails on a socket). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
