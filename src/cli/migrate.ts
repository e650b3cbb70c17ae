// `warren migrate`: applies the committed migrations (every command also does so on start).
import { closeDb } from "../db/client.js";
import { maskUrl, openDatabase } from "../db/resolve.js";
import { expectPositionals, parseCommandArgs, type Command } from "./command.js";

export const migrateCommand: Command = {
  name: "migrate",
  summary: "apply database migrations",
  usage: `Usage: warren migrate

Apply the committed migrations to the database in use (DATABASE_URL or the embedded
server), under an advisory lock so concurrent starts migrate once.

Options:
  -h, --help  show this help`,
  async run(args, io) {
    const { positionals } = parseCommandArgs("migrate", {
      args,
      allowPositionals: true,
      options: {},
    });
    expectPositionals(positionals, "migrate", { required: [] });
    const { db, url } = await openDatabase(io.env);
    await closeDb(db);
    io.out(`database is up to date (${maskUrl(url)})`);
  },
};
