// `warren db url|status|stop`: which database warren uses, and the embedded server's lifecycle.
import { embeddedStatus, ensureEmbedded, stopEmbedded } from "../db/embedded.js";
import { connectChecked, DatabaseUnavailableError, maskUrl, warrenHome } from "../db/resolve.js";
import {
  expectPositionals,
  parseCommandArgs,
  UsageError,
  type RunCommand,
  type Io,
} from "./command.js";

const ACTIONS = ["url", "status", "stop"] as const;

export const runDb: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandArgs("db", {
    args,
    allowPositionals: true,
    options: { json: { type: "boolean", default: false } },
  });
  expectPositionals(positionals, "db", { required: ["an action (url, status or stop)"] });
  const action = positionals[0]!;
  switch (action) {
    case "url":
      io.out(io.env.DATABASE_URL || (await ensureEmbedded(warrenHome(io.env))));
      return;
    case "status":
      return status(io, values.json);
    case "stop":
      return stop(io);
    default:
      throw new UsageError(`unknown action "${action}"; use one of ${ACTIONS.join(", ")}`, "db");
  }
};

async function status(io: Io, json: boolean): Promise<number> {
  const url = io.env.DATABASE_URL;
  if (url) {
    const problem = await connectChecked(url).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof DatabaseUnavailableError) return error.message;
        throw error;
      },
    );
    const report = { source: "DATABASE_URL", url: maskUrl(url), reachable: !problem };
    if (json) io.out(JSON.stringify({ ...report, error: problem }));
    else {
      io.out(`database:  DATABASE_URL ${report.url}`);
      io.out(`reachable: ${problem ? `no (${problem})` : "yes"}`);
    }
    return problem ? 1 : 0;
  }
  const home = warrenHome(io.env);
  const embedded = await embeddedStatus(home);
  const shown = { ...embedded, url: embedded.url && maskUrl(embedded.url) };
  if (json) {
    io.out(JSON.stringify({ source: "embedded", home, ...shown }));
    return 0;
  }
  io.out(`database:    embedded PostgreSQL in ${home}`);
  io.out(`initialised: ${embedded.initialised ? "yes" : "no (created on first use)"}`);
  io.out(`running:     ${embedded.running ? "yes" : "no"}`);
  if (embedded.port !== undefined) io.out(`port:        ${embedded.port}`);
  if (shown.url) io.out(`url:         ${shown.url} (full URL: warren db url)`);
  io.out(`data:        ${embedded.dataDir}`);
  io.out(`log:         ${embedded.logPath}`);
  return 0;
}

async function stop(io: Io): Promise<void> {
  if (io.env.DATABASE_URL) {
    io.out(
      `DATABASE_URL is set (${maskUrl(io.env.DATABASE_URL)}): warren does not manage that server; nothing stopped`,
    );
    return;
  }
  const home = warrenHome(io.env);
  const stopped = await stopEmbedded(home);
  io.out(
    stopped
      ? `stopped the embedded database in ${home}`
      : `the embedded database in ${home} is not running`,
  );
}
