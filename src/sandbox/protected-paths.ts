// The files that configure warren, which no agent may change (SPEC §3): below a working
// directory or a repository root, `.warren/` (but `.warren/worktrees/`, where isolated children
// work), `.claude/`, `.codex/`, `.mcp.json`, `.git/hooks/`, `.git/config`, and the `.git` entry
// itself (a file or link there would redirect warren's own git). The file tools refuse to write
// them; the sandbox keeps them read-only to bash; a hook or MCP server may run a file there
// (tools/runnable.ts); one list, here below both, since no agent could have written it.
import path from "node:path";

/** Relative to a working directory or repository root: the entry and everything below it. */
export const CONFIG_ENTRIES = [
  ".warren",
  ".claude",
  ".codex",
  // Skills (`.agents/skills/`): their names and descriptions reach every later agent's prompt.
  ".agents",
  ".mcp.json",
  path.join(".git", "hooks"),
  path.join(".git", "config"),
] as const;

/** Below `.warren/`: writable again (isolated children's worktrees). */
export const WORKTREES_ENTRY = path.join(".warren", "worktrees");

function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return !(rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

/**
 * The configuration entry below `base` that `p` is or lies in (e.g. `.claude`), or undefined.
 * `.git` itself counts, but not what lies below it (other than hooks/ and config).
 */
export function configEntryOf(base: string, p: string): string | undefined {
  if (path.resolve(p) === path.join(base, ".git")) return ".git";
  for (const entry of CONFIG_ENTRIES) {
    const at = path.join(base, entry);
    if (!inside(at, p)) continue;
    if (entry === ".warren" && inside(path.join(base, WORKTREES_ENTRY), p)) {
      // The worktrees folder itself is warren's; what lies below it is the children's.
      if (path.resolve(p) === path.join(base, WORKTREES_ENTRY)) return entry;
      continue;
    }
    return entry;
  }
  return undefined;
}
