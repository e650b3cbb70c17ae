// Patterns as the policy matches them: `*` is any run of characters; a command pattern also covers
// the command without its trailing ` *`; a deny pattern's options in any order; a path pattern
// against the path normalised to the working directory.
import path from "node:path";
import { collapse, programName } from "./shell.js";

export type Patterns = string[] | undefined;

/** A path as patterns see it: relative to `cwd` (posix separators) when inside it, else absolute. */
export function normalisePath(cwd: string, given: string): string {
  const absolute = path.posix.resolve(cwd, given.replace(/\\/g, "/"));
  const rel = path.posix.relative(path.posix.resolve(cwd), absolute);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith("../") || path.posix.isAbsolute(rel)) return absolute;
  return rel;
}

/** `*` matches any run of characters, everything else itself; linear in practice. */
export function matchesPattern(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== "*" && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

/** A command pattern covers `text`, also without its trailing ` *` (`git log *` covers `git log`). */
export function commandMatches(pattern: string, text: string): boolean {
  return matchesPattern(pattern, text) || matchesPattern(pattern, `${text} `);
}

/** A command pattern as written, whitespace collapsed and (for deny) its program normalised. */
export function commandPattern(pattern: string, forDeny: boolean): string {
  const p = collapse(pattern);
  if (!forDeny) return p;
  const space = p.indexOf(" ");
  const first = space < 0 ? p : p.slice(0, space);
  if (first.includes("*")) return p;
  return programName(first.replace(/\\/g, "")) + (space < 0 ? "" : p.slice(space));
}

/** Paths: a deny pattern without a `/` also matches the base name (`.env` denies `a/.env`). */
export function pathHit(list: Patterns, subject: string, forDeny: boolean): boolean {
  if (!list?.length) return false;
  const base = path.posix.basename(subject);
  return list.some((raw) => {
    const p = raw.startsWith("./") ? raw.slice(2) : raw;
    return matchesPattern(p, subject) || (forDeny && !p.includes("/") && matchesPattern(p, base));
  });
}
