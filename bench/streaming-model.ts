// A fake model server in a process of its own, streaming long slow answers to every agent named
// `streamer-…`: the TUI benchmark's load comes from elsewhere, as a real model server's would,
// instead of sharing the TUI's event loop. Prints its base URL on the first line of stdout.
import { agentNameOf, startFakeModel } from "../test/support/fake-model.js";

const fake = await startFakeModel();
fake.script({
  match: (req) => (agentNameOf(req) ?? "").startsWith("streamer-"),
  reply: { text: "lorem ipsum dolor sit amet ".repeat(400), chunkSize: 6, chunkDelayMs: 10 },
  times: Infinity,
  label: "streamers",
});
process.stdout.write(`${fake.baseURL}\n`);
process.on("SIGTERM", () => void fake.close().then(() => process.exit(0)));
