// The memory benchmark's fake model, run in a child process of its own so that its sockets and
// the requests it records stay out of the measured process's resident memory. Every agent is
// told to `wait` (no from_agents) for HOLD seconds; once its wait returns, it answers.
// Started with `fork(script, [HOLD])`; posts its address, answers "stats", exits on disconnect.
// Import only its types elsewhere: it starts the server whenever it has an IPC channel.
import { startFakeModel, type RecordedRequest, type Reply } from "../test/support/fake-model.js";

export type HoldModelRequest = { type: "stats" };

export type HoldModelMessage =
  { type: "listening"; baseURL: string } | { type: "stats"; requests: number; unmatched: number };

function holdThenAnswer(holdSeconds: number) {
  return (req: RecordedRequest): Reply =>
    req.lastMessage?.role === "tool"
      ? { text: "released" }
      : { toolCalls: [{ name: "wait", arguments: { timeout: holdSeconds } }] };
}

async function main(): Promise<void> {
  const send = (message: HoldModelMessage) => process.send?.(message);
  const fake = await startFakeModel();
  fake.script({ reply: holdThenAnswer(Number(process.argv[2] ?? 600)), times: Infinity });
  let requests = 0;
  process.on("message", (message: HoldModelRequest) => {
    if (message.type !== "stats") return;
    // Counted and dropped, so the recorded requests do not pile up over a long run.
    requests += fake.requests.splice(0).length;
    send({ type: "stats", requests, unmatched: fake.unmatched.length });
  });
  process.once("disconnect", () => {
    void fake.close().finally(() => process.exit(0));
  });
  send({ type: "listening", baseURL: fake.baseURL });
}

if (process.send) {
  main().catch((error: unknown) => {
    process.stderr.write(`hold-model: ${String(error)}\n`);
    process.exit(1);
  });
}
