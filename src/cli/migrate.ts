// `warren migrate`: applies the committed migrations (every command also does so on start).
import { closeDb } from "../db/client.js";
import { maskUrl, openDatabase } from "../db/resolve.js";
import { expectPositionals, parseCommandArgs, type RunCommand } from "./command.js";

export const runMigrate: RunCommand = async (args, io) => {
  const { positionals } = parseCommandArgs("migrate", {
    args,
    allowPositionals: true,
    options: {},
  });
  expectPositionals(positionals, "migrate", { required: [] });
  const { db, url } = await openDatabase(io.env);
  await closeDb(db);
  io.out(`database is up to date (${maskUrl(url)})`);
};
