// Where warren keeps its config file and its home: below the config and the database layers,
// which both need them, and the sandbox, which hides them.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

type Env = Record<string, string | undefined>;

/** warren's config directory: $XDG_CONFIG_HOME/warren, else ~/.config/warren. */
export function warrenConfigDir(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return path.join(base, "warren");
}

/** The config file in force: $WARREN_CONFIG, else $XDG_CONFIG_HOME/warren/config.json. */
export function configPath(env: Env = process.env): string {
  if (env.WARREN_CONFIG) return path.resolve(env.WARREN_CONFIG);
  return path.join(warrenConfigDir(env), "config.json");
}

/** warren's home (the embedded database, its password): $WARREN_HOME, else $XDG_DATA_HOME/warren. */
export function warrenHome(env: Env = process.env): string {
  if (env.WARREN_HOME) return path.resolve(env.WARREN_HOME);
  const dataHome = env.XDG_DATA_HOME || path.join(env.HOME || os.homedir(), ".local", "share");
  return path.resolve(dataHome, "warren");
}

/** The nearest directory at or above `dir` holding `.git` (a directory, or a worktree's file). */
export function repositoryRoot(dir: string): string | undefined {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, ".git"))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}
