// `warren send AGENT MESSAGE`: mail from the person (shown to agents as `⟨person⟩`, llm/framing.ts PERSON).
import { loadConfig } from "../config/config.js";
import { sendMail } from "../mail/send.js";
import { parseCommandArgs, UsageError, type RunCommand } from "./command.js";
import { shownName } from "../text/format.js";
import { resolveAgent, withDatabase } from "./scope.js";

export const runSend: RunCommand = async (args, io) => {
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
  const { limits } = loadConfig(io.env);
  await withDatabase(io.env, async (db) => {
    const agent = await resolveAgent(db, ref, values.tree);
    const receipt = await sendMail(db, {
      treeId: agent.tree_id,
      fromId: null,
      toId: agent.id,
      body: message,
      maxBytes: limits.maxMessageBytes,
    });
    io.out(`sent mail #${receipt.mailId} to ${shownName(agent)}`);
  });
};

/** The whole of stdin (a file, a pipe or a socket; opening /dev/stdin fails on a socket). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
