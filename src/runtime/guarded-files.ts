// Files whose content reaches prompts or defines profiles: instruction files (AGENTS.md,
// CLAUDE.md, anywhere, and the files they import with `@path`), agent files (`.warren/agents/`,
// `.claude/agents/`, the config directory's `agents/`) and skills (SKILL.md). A `write_file` or
// `edit_file` to one is asked even where the policy allows writes (approval-gate.ts): what an
// agent puts there would speak to every later agent with the person's voice. Bash can still write
// them in the sandbox; that is why prompts use only accepted content (config/accepted-files.ts).
import fs from "node:fs";
import path from "node:path";
import { warrenConfigDir } from "../paths.js";
import { isImportedInstruction } from "./instructions.js";

type Env = Record<string, string | undefined>;

const WRITE_TOOLS = new Set(["write_file", "edit_file"]);
const NAMES = new Set(["agents.md", "claude.md", "skill.md"]);
/** Folder pairs that hold agent files, matched without regard to case. */
const AGENT_DIRS = [
  [".warren", "agents"],
  [".claude", "agents"],
];

/** The path as written and as the file system resolves it (a symlink to a guarded file counts). */
function pathsOf(cwd: string, given: string): string[] {
  const absolute = path.resolve(cwd, given);
  const out = [absolute];
  try {
    out.push(fs.realpathSync(absolute));
  } catch {
    try {
      out.push(path.join(fs.realpathSync(path.dirname(absolute)), path.basename(absolute)));
    } catch {
      // Neither the file nor its folder exists: the path as written is all there is.
    }
  }
  return out;
}

function isGuarded(file: string, env: Env): boolean {
  if (NAMES.has(path.basename(file).toLowerCase())) return true;
  const parts = file.toLowerCase().split(path.sep);
  for (let i = 0; i + 1 < parts.length - 1; i++) {
    if (AGENT_DIRS.some(([a, b]) => parts[i] === a && parts[i + 1] === b)) return true;
  }
  const own = path.join(warrenConfigDir(env), "agents");
  const rel = path.relative(own, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** The guarded file a write call targets, or undefined (not a write, or an ordinary file). */
export function guardedWriteTarget(
  tool: string,
  args: unknown,
  cwd: string,
  env: Env = process.env,
): string | undefined {
  if (!WRITE_TOOLS.has(tool) || !args || typeof args !== "object") return undefined;
  const given = (args as { path?: unknown }).path;
  if (typeof given !== "string" || given === "") return undefined;
  // A file an instruction file imports (`@docs/notes.md`) is an instruction file too.
  return pathsOf(cwd, given).find((p) => isGuarded(p, env) || isImportedInstruction(p, cwd, env));
}
