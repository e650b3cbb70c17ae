// The asking side of the approval round-trip benchmark (approvals.ts), in a process of its own as
// a `warren worker` would be: on each message it writes a request and the `? needs approval`
// activity, as the gate does, and answers with the wall-clock time just before the write.
import { performance } from "node:perf_hooks";
import { requestApproval } from "../src/approvals/approvals.js";
import { closeDb, createDb } from "../src/db/client.js";
import { setActivity } from "../src/feed/publish.js";

const [url, rootId] = process.argv.slice(2);
if (!url || !rootId || !process.send) throw new Error("usage: fork(approval-asker, [url, rootId])");
const db = createDb(url, { max: 2, applicationName: "warren-bench-asker" });

process.on("message", (message: { n: number } | "stop") => {
  if (message === "stop") {
    void closeDb(db).then(() => process.exit(0));
    return;
  }
  void (async () => {
    const { n } = message;
    const startWall = performance.timeOrigin + performance.now();
    const request = await requestApproval(db, {
      treeId: rootId,
      agentId: rootId,
      callKey: `bench-${n}`,
      tool: "bash",
      subject: `echo ${n}`,
      arguments: JSON.stringify({ command: `echo ${n}` }),
      pattern: "echo *",
    });
    await setActivity(db, rootId, `? needs approval ${request.id}: bash: echo ${n}`);
    process.send!({ n, id: request.id, startWall });
  })();
});
process.send({ ready: true });
