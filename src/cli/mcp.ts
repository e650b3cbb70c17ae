// `warren mcp list`: each configured MCP server, its state and its tools (fetched now, and stored
// for every process's turns, unless --cached). `warren mcp allow [FILE]`: a project's .mcp.json,
// shown and then allowed as it is now (mcp/allow.ts), so its servers may start.
import fs from "node:fs";
import path from "node:path";
import { ConfigError, loadConfig, type Config } from "../config/config.js";
import { rememberAllow } from "../mcp/allow.js";
import { refreshCatalog } from "../mcp/catalog.js";
import { listServers, listingLines } from "../mcp/listing.js";
import { allowLines, findProjectMcpFile, parseProjectMcp } from "../mcp/project.js";
import { wordWarning } from "../db/warning.js";
import { escapeControl } from "../text/escape.js";
import { errorMessage } from "../tools/tool.js";
import { jsonText } from "../text/format.js";
import {
  CliError,
  expectPositionals,
  parseCommand,
  JSON_OPTION,
  UsageError,
  type Io,
  type RunCommand,
} from "./command.js";
import { withDatabase } from "./scope.js";

export const runMcp: RunCommand = async (args, io) => {
  const { values, positionals } = parseCommand("mcp", args, {
    ...JSON_OPTION,
    cached: { type: "boolean", default: false },
  });
  const [sub] = positionals;
  if (sub !== "list" && sub !== "allow")
    throw new UsageError(
      sub ? `unknown subcommand "${sub}"` : "missing subcommand (list or allow)",
      "mcp",
    );
  let config: Config;
  try {
    config = loadConfig(io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
  if (sub === "allow") {
    expectPositionals(positionals, "mcp", { required: ["allow"], optional: ["FILE"] });
    return allow(positionals[1], config, io);
  }
  expectPositionals(positionals, "mcp", { required: ["list"] });
  for (const warning of config.projectMcp?.warnings ?? []) io.err(`warren: ${warning}`);
  const servers = config.mcpServers;
  await withDatabase(io.env, async (db) => {
    if (!values.cached) await refreshCatalog(db, servers);
    const listing = await listServers(db, servers);
    if (values.json) io.out(jsonText(listing));
    else for (const line of listingLines(listing)) io.out(line);
  });
};

async function allow(given: string | undefined, config: Config, io: Io): Promise<void> {
  const file = given ? path.resolve(given) : findProjectMcpFile(process.cwd());
  if (!file) {
    throw new CliError(
      `no .mcp.json in ${process.cwd()} or above it up to the repository root (warren mcp allow FILE names one)`,
    );
  }
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${errorMessage(err)}`);
  }
  // Read once: what is shown is exactly what is allowed.
  const project = parseProjectMcp(file, content, io.env, {
    taken: Object.keys(config.mcpServers).filter((n) => !config.mcpServers[n]!.allow),
  });
  for (const warning of project.warnings) io.err(`warren: ${escapeControl(warning)}`);
  const names = Object.keys(project.servers);
  if (names.length === 0) {
    throw new CliError(`${project.file} names no MCP server warren can start; nothing allowed`);
  }
  io.out(
    `allowing ${escapeControl(project.file)}: these servers may start when an agent needs them`,
  );
  for (const line of allowLines(project)) io.out(line);
  rememberAllow(project.allow);
  io.out(
    `allowed (sha256 ${project.allow.key.slice(0, 12)}…); if the file changes, allow it again`,
  );
  try {
    await withDatabase(io.env, async (db) => {
      await refreshCatalog(db, project.servers, (w) => io.err(`warren: ${wordWarning(w)}`));
      const listing = await listServers(db, project.servers);
      for (const line of listingLines(listing)) io.out(line);
    });
  } catch (err) {
    io.err(
      `warren: their tools were not fetched now (${errorMessage(err).split("\n")[0]}); a warren process fetches them when it starts`,
    );
  }
}
