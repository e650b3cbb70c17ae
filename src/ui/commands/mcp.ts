// /mcp: the MCP servers with their state and tools, and allowing the project's .mcp.json; /trust:
// the project's settings files, skill and command files and .mcp.json trusted, applied at once.
import { trustFiles } from "../../config/trust.js";
import { isAllowed, rememberAllow } from "../../mcp/allow.js";
import { heldSkillsAndCommands } from "../../skills/listing.js";
import { primeTrust, syncTrust } from "../trust-sync.js";
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
    // What this process used before the change (the line says what changed from it).
    primeTrust(ctx);
    // The settings files as read at start (or at the last change of trust); the skill and
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
    trustFiles([...waiting.map((f) => f.gate!), ...held.map((h) => h.gate)]);
    if (servers) rememberAllow(project.allow);
    // Applied as a `warren trust` in another shell is (trust-sync.ts): at once, here and in
    // every worker thread; the watch then sees nothing more to do.
    if (!(await syncTrust(ctx))) {
      ctx.say(`trusted ${[...waiting, ...held].map((f) => f.file).join(", ")}`);
    }
  },
};

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
  primeTrust(ctx);
  rememberAllow(project.allow);
  // Said, and its servers' tools fetched, as for `warren mcp allow` in another shell.
  await syncTrust(ctx);
}
