// /mcp: the MCP servers with their state and tools, and allowing the project's .mcp.json; /trust:
// the project's settings files, skill and command files and .mcp.json trusted, applied at once.
import { loadConfig } from "../../config/config.js";
import { applyTrusted } from "../../config/reload.js";
import { trustFiles } from "../../config/trust.js";
import { wordWarning } from "../../db/warning.js";
import { isAllowed, rememberAllow } from "../../mcp/allow.js";
import { allowLines } from "../../mcp/project.js";
import { heldSkillsAndCommands } from "../../skills/listing.js";
import { describeFailure } from "../failure.js";
import type { CommandContext, CommandSpec } from "./types.js";

export const mcp: CommandSpec<"mcp"> = {
  name: "mcp",
  usage: "/mcp [allow]",
  help: "the MCP servers with their state and tools; allow: start the project .mcp.json's servers",
  parse: (args, _rest, usage) => {
    if (args.length === 0) return { name: "mcp" };
    if (args.length === 1 && args[0] === "allow") return { name: "mcp", allow: true };
    return { error: `/mcp takes nothing or "allow" (${usage})` };
  },
  async run(ctx, command) {
    if (command.allow) return allowProject(ctx);
    // The MCP modules (and their SDK, ~1 MB) load on first use, not before the first frame.
    const { listServers, listingLines } = await import("../../mcp/listing.js");
    const listing = await listServers(ctx.db, ctx.config.mcpServers ?? {});
    ctx.say(listingLines(listing).join("\n"));
  },
};

export const trust: CommandSpec<"trust"> = {
  name: "trust",
  usage: "/trust",
  help: "trust this project's own .claude/settings*.json (allow rules, env, hooks), skill and command files, and .mcp.json (servers); they apply at once",
  parse: (args, _rest, usage) =>
    args.length > 0 ? { error: `/trust takes no arguments (${usage})` } : { name: "trust" },
  async run(ctx) {
    // The settings files as read at start (the first screen's waiting line); the skill and
    // command files as the first screen lists them now.
    const waiting = (ctx.config.claudeSettings?.files ?? []).filter(
      (f) => f.state === "waiting" && f.gate,
    );
    const held = heldSkillsAndCommands(ctx.cwd, ctx.env);
    const project = ctx.config.projectMcp;
    const servers = project && Object.keys(project.servers).length > 0 && !isAllowed(project.allow);
    if (waiting.length === 0 && held.length === 0 && !servers) {
      return ctx.say("nothing here waits for trust (`warren trust --list` lists what is trusted)");
    }
    if (waiting.length > 0 || held.length > 0) {
      trustFiles([...waiting.map((f) => f.gate!), ...held.map((h) => h.gate)]);
      const named = [...waiting, ...held].map((f) => f.file).join(", ");
      applyNow(ctx, `trusted ${named}`);
    }
    if (servers) return allowProject(ctx);
  },
};

/**
 * The config read again and its trust-dependent parts (settings rules, hooks, env) replaced in
 * place, here and in every worker thread: they apply from the next tool call. Skills and command
 * files are read from disk per turn and per command, so they need nothing more.
 */
function applyNow(ctx: CommandContext, trusted: string): void {
  let next;
  try {
    next = loadConfig(ctx.env, ctx.cwd);
  } catch (error) {
    return ctx.complain(
      `${trusted}; the config could not be read again (${describeFailure(error)}): settings apply from warren's next start`,
    );
  }
  applyTrusted(ctx.config, next);
  ctx.ui.configChanged();
  ctx.say(`${trusted}: they apply from the next tool call`);
}

/**
 * `/mcp allow`: the project's .mcp.json as read when warren started (what its servers are) is
 * allowed; their tools are fetched, and every thread offers them within a re-read (2 s).
 */
async function allowProject(ctx: CommandContext): Promise<void> {
  const project = ctx.config.projectMcp;
  if (!project || Object.keys(project.servers).length === 0) {
    return ctx.complain(
      "no .mcp.json with MCP servers here (looked from the working directory up to the repository root)",
    );
  }
  if (isAllowed(project.allow))
    return ctx.say(`${project.file} is allowed already (/mcp lists it)`);
  rememberAllow(project.allow);
  ctx.say([`allowed ${project.file}; its servers may start:`, ...allowLines(project)].join("\n"));
  const [{ refreshCatalog }, { listServers, listingLines }] = await Promise.all([
    import("../../mcp/catalog.js"),
    import("../../mcp/listing.js"),
  ]);
  await refreshCatalog(ctx.db, project.servers, (w) => ctx.complain(wordWarning(w)));
  ctx.say(listingLines(await listServers(ctx.db, project.servers)).join("\n"));
}
