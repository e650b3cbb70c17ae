// `warren mcp list`: each configured MCP server, its state and its tools (fetched now, and stored
// for every process's turns, unless --cached).
import { ConfigError, loadConfig } from "../config/config.js";
import { refreshCatalog } from "../mcp/catalog.js";
import { listServers, listingLines } from "../mcp/listing.js";
import { jsonText } from "../text/format.js";
import {
  CliError,
  expectPositionals,
  parseCommandArgs,
  UsageError,
  type RunCommand,
} from "./command.js";
import { withDatabase } from "./scope.js";

export const runMcp: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommandArgs("mcp", {
    args,
    allowPositionals: true,
    options: {
      json: { type: "boolean", default: false },
      cached: { type: "boolean", default: false },
    },
  });
  const [sub] = positionals;
  if (sub === "allow") {
    throw new CliError(
      'warren mcp allow: a project\'s .mcp.json is not read yet; configure servers in "mcp_servers" of the config file',
    );
  }
  if (sub !== "list")
    throw new UsageError(sub ? `unknown subcommand "${sub}"` : "missing subcommand (list)", "mcp");
  expectPositionals(positionals, "mcp", { required: ["list"] });
  let servers;
  try {
    servers = loadConfig(io.env).mcpServers;
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
  await withDatabase(io.env, async (db) => {
    if (!values.cached) await refreshCatalog(db, servers);
    const listing = await listServers(db, servers);
    if (values.json) io.out(jsonText(listing));
    else for (const line of listingLines(listing)) io.out(line);
  });
};
