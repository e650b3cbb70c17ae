// `warren worker`: a headless process that runs agents' turns until SIGINT/SIGTERM, then stops
// gracefully (in-flight turns are handed back for other workers to resume).
import { loadConfig } from "../config/config.js";
import { closeDb } from "../db/client.js";
import { maskUrl, openDatabase } from "../db/resolve.js";
import { outageFilter, wordWarning } from "../db/warning.js";
import { expectPositionals, parseCommandArgs, parseInteger, type RunCommand } from "./command.js";
import { startRuntime } from "../runtime/pool.js";

export const runWorker: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandArgs("worker", {
    args,
    allowPositionals: true,
    options: { concurrency: { type: "string" }, threads: { type: "string" } },
  });
  expectPositionals(positionals, "worker", { required: [] });
  const concurrencyFlag = parseInteger(values.concurrency, "--concurrency", "worker");
  const threadsFlag = parseInteger(values.threads, "--threads", "worker");
  const loaded = loadConfig(io.env);
  const concurrency = concurrencyFlag ?? loaded.concurrency;
  const threads = threadsFlag ?? loaded.workerThreads;
  const config = { ...loaded, concurrency, workerThreads: threads };

  // Checks that the database answers and is migrated before any thread starts.
  const { db, url } = await openDatabase(io.env);
  await closeDb(db);

  const runtime = await startRuntime({
    url,
    config,
    threads,
    concurrency,
    onWarning: outageFilter((warning) => io.err(`warren: ${wordWarning(warning)}`)),
  });
  io.out(
    `worker running on ${maskUrl(url)}: ${threads} thread${threads === 1 ? "" : "s"}, up to ${concurrency} agents at once; Ctrl+C stops`,
  );
  const signal = await nextSignal();
  io.out(`${signal}: stopping (again to force)…`);
  const force = (again: NodeJS.Signals) => {
    io.err(`warren: ${again} again: stopping now`);
    process.exit(130);
  };
  process.once("SIGINT", force);
  process.once("SIGTERM", force);
  await runtime.stop();
  io.out("worker stopped");
};

function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
