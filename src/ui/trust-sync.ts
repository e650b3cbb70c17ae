// A trust decision applied in this process, whoever made it (SPEC §9): `/trust` and `/mcp allow`
// here, or `warren trust`, `warren trust --revoke` and `warren mcp allow` in another shell (the
// TUI watches the stores, config/trust.ts watchTrust). One path for all of them: what this process
// would use as trusted now is compared with what it used; on a difference the config is read again
// and its trust-dependent parts (settings rules, hooks, env) replaced here and in every worker
// thread (config/reload.ts), one line says what changed, and a newly allowed .mcp.json's servers
// are asked for their tools. Skill and command files are read from disk per turn and per command
// (their trust checked each time), and a project server's tools are offered only while its file
// is allowed (mcp/catalog.ts): they need nothing more. Called again with nothing changed (the
// watch seeing `/trust`'s own write), it does nothing.
import { loadConfig, type Config } from "../config/config.js";
import { applyTrusted } from "../config/reload.js";
import { wordWarning } from "../db/warning.js";
import { isAllowed } from "../mcp/allow.js";
import { allowLines } from "../mcp/project.js";
import { projectSkillAndCommandFiles } from "../skills/listing.js";
import type { CommandContext, TrustView } from "./commands/types.js";
import { describeFailure } from "./failure.js";

export type TrustContext = Pick<
  CommandContext,
  "db" | "config" | "cwd" | "env" | "say" | "complain" | "session" | "ui"
>;

function viewOf(ctx: TrustContext, config: Config): TrustView {
  const files = new Map<string, boolean>();
  for (const f of config.claudeSettings?.files ?? []) {
    // A file with nothing that waits for trust, or not used at all, changes nothing.
    if (f.scope !== "project" || !f.gate || f.widens.length === 0 || f.state === "broken") continue;
    files.set(f.file, f.state === "read");
  }
  for (const f of projectSkillAndCommandFiles(ctx.cwd, ctx.env)) files.set(f.file, f.trusted);
  const project = ctx.config.projectMcp;
  const mcp = !!project && Object.keys(project.servers).length > 0 && isAllowed(project.allow);
  return { files, mcp };
}

/** What this process uses as trusted, taken once before any change: later ones are told from it. */
export function primeTrust(ctx: TrustContext): TrustView {
  return (ctx.session.trust ??= viewOf(ctx, ctx.config));
}

/**
 * Applies whatever trust changed since the last call (or the priming): the config's
 * trust-dependent parts, one line per kind of change, a newly allowed server's tools fetched.
 * Returns whether anything changed.
 */
export async function syncTrust(ctx: TrustContext): Promise<boolean> {
  const before = primeTrust(ctx);
  let next: Config | undefined;
  let failure: unknown;
  try {
    next = loadConfig(ctx.env, ctx.cwd);
  } catch (error) {
    failure = error;
  }
  // Unreadable: the settings files are taken as they were (what they hold cannot be known).
  const after = viewOf(ctx, next ?? ctx.config);
  ctx.session.trust = after;
  const changed = (trusted: boolean) =>
    [...after.files]
      .filter(([file, now]) => now === trusted && (before.files.get(file) ?? false) !== trusted)
      .map(([file]) => file);
  // A file first seen untrusted (created since) is not a revocation; one first seen trusted is.
  const trusted = changed(true);
  const revoked = changed(false).filter((file) => before.files.has(file));
  const project = ctx.config.projectMcp;
  const allowed = after.mcp && !before.mcp;
  const disallowed = !after.mcp && before.mcp;
  if (trusted.length + revoked.length === 0 && !allowed && !disallowed) return false;
  if (next) {
    applyTrusted(ctx.config, next);
    ctx.ui.configChanged();
  }
  if (trusted.length > 0) {
    const named = `trusted ${trusted.join(", ")}`;
    if (next) ctx.say(`${named}: they apply from the next tool call`);
    else {
      ctx.complain(
        `${named}; the config could not be read again (${describeFailure(failure)}): settings apply from warren's next start`,
      );
    }
  }
  if (revoked.length > 0) {
    ctx.say(`no longer trusted: ${revoked.join(", ")}: not used from the next tool call`);
  }
  if (disallowed && project) {
    ctx.say(`no longer trusted: ${project.file}: its servers' tools are no longer offered`);
  }
  if (allowed && project) {
    ctx.say([`allowed ${project.file}; its servers may start:`, ...allowLines(project)].join("\n"));
    const [{ refreshCatalog }, { listServers, listingLines }] = await Promise.all([
      import("../mcp/catalog.js"),
      import("../mcp/listing.js"),
    ]);
    await refreshCatalog(ctx.db, project.servers, (w) => ctx.complain(wordWarning(w)));
    ctx.say(listingLines(await listServers(ctx.db, project.servers)).join("\n"));
  }
  return true;
}
