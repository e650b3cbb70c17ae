// What warren runs for the person (a hook's command, an MCP stdio server's command) resolved to
// the files it would execute, and refused when an agent could have written any of them (SPEC §3:
// "nothing the model could have written runs outside the sandbox"). The files: the program (a
// path, or the first hit on PATH), the arguments that name existing files (`node tools/mcp.mjs`),
// and for `npx PKG` / `npm exec PKG` the `node_modules/.bin/BIN` and `node_modules/PKG` npx would
// pick walking up from the working directory. Each is followed link by link: the path as given,
// every symbolic link on the way and where it ends must all lie where agents cannot write.
// Agents write the tree's working directory and `sandbox_writable`, except the files that
// configure warren, read-only to them (protected-paths.ts: `.warren/` but its `worktrees/`,
// `.claude/`, `.codex/`, `.git/hooks`, …). The person's own config trusts more by path (`trusted_paths`); a project file
// never can. Pure file-system look-ups, synchronous and cheap: done at start and again before
// each run, so a file planted since is caught.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { configEntryOf } from "../sandbox/protected-paths.js";

type Env = Record<string, string | undefined>;

/** Where agents can write, and what the person trusts anyway; plain data (crosses threads). */
export interface RunTrust {
  /** Directories agents write below (the working directory, `sandbox_writable`), absolute. */
  writable: string[];
  /** `trusted_paths` from the person's config, absolute. */
  trusted: string[];
  /** The config file, named in the refusal line (how to trust). */
  configFile: string;
}

/** Symbolic links followed for one path before giving up (Linux's limit). */
const MAX_HOPS = 40;

function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return !(rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** Each writable directory as given and as its real path. */
function roots(dirs: readonly string[]): string[] {
  return [...new Set(dirs.flatMap((d) => [path.resolve(d), realOr(d)]))];
}

/**
 * The path as given, every symbolic link met while resolving it (each named by its real parent),
 * and where it ends (its last parts may not exist).
 */
export function pathsOnTheWay(absolute: string): string[] {
  const seen = [path.resolve(absolute)];
  let rest = path.resolve(absolute).split(path.sep).filter(Boolean);
  let at: string = path.sep;
  let hops = 0;
  while (rest.length > 0) {
    const part = rest.shift()!;
    const next = path.join(at, part);
    let info: fs.Stats;
    try {
      info = fs.lstatSync(next);
    } catch {
      seen.push(path.join(next, ...rest));
      return seen;
    }
    if (!info.isSymbolicLink()) {
      at = next;
      continue;
    }
    seen.push(next);
    if (++hops > MAX_HOPS) return seen;
    let target: string;
    try {
      target = fs.readlinkSync(next);
    } catch {
      return seen;
    }
    if (path.isAbsolute(target)) at = path.sep;
    rest = [...target.split(path.sep).filter(Boolean), ...rest];
  }
  seen.push(at);
  return [...new Set(seen)];
}

/** The writable directory `p` lies in (agents could write it), or undefined. */
export function writableBy(trust: RunTrust, extraWritable: readonly string[], p: string) {
  const trusted = roots(trust.trusted);
  if (trusted.some((t) => inside(t, p))) return undefined;
  for (const root of roots([...trust.writable, ...extraWritable])) {
    if (!inside(root, p)) continue;
    // The files that configure warren are read-only to agents (bash and the file tools).
    if (configEntryOf(root, p) !== undefined) continue;
    return root;
  }
  return undefined;
}

/** The first path on the way to `file` that agents could write: [that path, its writable dir]. */
function writableOnTheWay(
  trust: RunTrust,
  extraWritable: readonly string[],
  file: string,
): [string, string] | undefined {
  for (const p of pathsOnTheWay(file)) {
    const root = writableBy(trust, extraWritable, p);
    if (root !== undefined) return [p, root];
  }
  return undefined;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function exists(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

function isExecutableFile(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Shell builtins and keywords: run by bash itself, found on no PATH. */
const BUILTINS = new Set(
  (
    "! [ [[ ]] { } : . alias bg bind break builtin caller case cd command compgen complete " +
    "continue declare dirs disown do done echo elif else enable esac eval exec exit export false " +
    "fc fg fi for function getopts hash help history if in jobs kill let local logout mapfile " +
    "popd printf pushd pwd read readarray readonly return select set shift shopt source suspend " +
    "test then time times trap true type typeset ulimit umask unalias unset until wait while"
  ).split(" "),
);

export interface Resolved {
  /** The files the command would execute or read as code, absolute. */
  files: string[];
}

/**
 * Where `program` is found: a path (relative to `cwd`), or the first executable on `PATH` (an
 * empty entry is the working directory). A program planted later in an earlier PATH directory
 * is the first hit of the next look-up, made before each run.
 */
function lookUp(program: string, cwd: string, pathVar: string | undefined, out: Resolved): void {
  if (program.includes("/")) {
    out.files.push(path.resolve(cwd, expandTilde(program)));
    return;
  }
  if (BUILTINS.has(program)) return;
  for (const entry of (pathVar ?? "").split(":")) {
    const candidate = path.join(path.resolve(cwd, entry || "."), program);
    if (isExecutableFile(candidate)) {
      out.files.push(candidate);
      return;
    }
  }
}

function expandTilde(word: string): string {
  const home = process.env.HOME || os.homedir();
  if (word === "~") return home;
  return word.startsWith("~/") ? path.join(home, word.slice(2)) : word;
}

/** The arguments that name existing regular files (`--opt=FILE` too), absolute. */
function argumentFiles(args: readonly string[], cwd: string, out: Resolved): void {
  for (const arg of args) {
    const candidates = [arg];
    const eq = arg.indexOf("=");
    if (arg.startsWith("-") && eq > 0) candidates.push(arg.slice(eq + 1));
    for (const c of candidates) {
      if (c === "" || c.startsWith("-")) continue;
      const file = path.resolve(cwd, expandTilde(c));
      if (isFile(file)) out.files.push(file);
    }
  }
}

/** `@scope/name@1.2` → `@scope/name`; `name@latest` → `name`. */
function packageName(spec: string): string {
  const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
  return at > 0 ? spec.slice(0, at) : spec;
}

/** The packages `npx ARGS` / `npm exec ARGS` names: `--package`/`-p` values and the command. */
function npxPackages(args: readonly string[]): string[] {
  const names: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      if (args[i + 1]) names.push(args[i + 1]!);
      break;
    }
    if (arg === "-p" || arg === "--package") {
      if (args[i + 1]) names.push(args[++i]!);
      continue;
    }
    if (arg.startsWith("--package=")) {
      names.push(arg.slice("--package=".length));
      continue;
    }
    if (arg === "-c" || arg === "--call") return names;
    if (arg.startsWith("-")) continue;
    names.push(arg);
    break;
  }
  return names.filter((n) => !n.includes("/") || n.startsWith("@")).map(packageName);
}

/**
 * What npx would run for `packages` from `cwd`: each `node_modules/.bin/BIN` and
 * `node_modules/PKG` there is from `cwd` up to `/` (npm's local prefix may be any of them). One
 * planted later is found by the next look-up, made before each start.
 */
function npxCandidates(packages: readonly string[], cwd: string, out: Resolved): void {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    for (const pkg of packages) {
      const bins = new Set([pkg, pkg.split("/").pop()!]);
      const places = [...bins].map((b) => path.join(dir, "node_modules", ".bin", b));
      places.push(path.join(dir, "node_modules", pkg));
      for (const p of places) if (exists(p)) out.files.push(p);
    }
    if (path.dirname(dir) === dir) return;
  }
}

function isNpx(program: string, args: readonly string[]): boolean {
  const base = path.basename(program);
  return base === "npx" || (base === "npm" && (args[0] === "exec" || args[0] === "x"));
}

/** What `program args…` would run (an MCP server's command line), from `cwd`. */
export function resolveCommand(
  program: string,
  args: readonly string[],
  cwd: string,
  pathVar: string | undefined,
): Resolved {
  const out: Resolved = { files: [] };
  lookUp(program, cwd, pathVar, out);
  argumentFiles(args, cwd, out);
  if (isNpx(program, args)) {
    npxCandidates(npxPackages(path.basename(program) === "npm" ? args.slice(1) : args), cwd, out);
  }
  return out;
}

/**
 * What a hook's shell command would run, from `cwd`: each simple command (split at `;`, `&&`,
 * `||`, `|`, `&`, newlines and parentheses) resolved as above, after quotes and the variables a
 * hook sees (`$CLAUDE_PROJECT_DIR`, `$HOME`, `$PWD`); a word with any other expansion is not a
 * file name that can be known in advance and is left out.
 */
export function resolveShellCommand(
  command: string,
  cwd: string,
  vars: Env,
  pathVar: string | undefined,
): Resolved {
  const out: Resolved = { files: [] };
  for (const words of simpleCommands(command, vars)) {
    const known = words.filter((w): w is string => w !== undefined);
    const program = words[0];
    if (program === undefined) {
      argumentFiles(known, cwd, out);
      continue;
    }
    // `env X=1 prog`, `exec prog`, `command prog`: the program is further on.
    let at = 0;
    while (
      at < words.length - 1 &&
      ["env", "exec", "command", "nohup", "time"].includes(words[at]!)
    ) {
      at++;
      while (at < words.length - 1 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[at] ?? "")) at++;
    }
    const prog = words[at];
    if (prog === undefined) {
      argumentFiles(known, cwd, out);
      continue;
    }
    const rest = words.slice(at + 1).filter((w): w is string => w !== undefined);
    out.files.push(...resolveCommand(prog, rest, cwd, pathVar).files);
  }
  return out;
}

/**
 * The simple commands of `command` as lists of words (undefined: a word with an expansion that
 * cannot be known). Leading `NAME=value` assignments are dropped. Comments end a line.
 */
function simpleCommands(command: string, vars: Env): (string | undefined)[][] {
  const commands: (string | undefined)[][] = [];
  let words: (string | undefined)[] = [];
  let word = "";
  let inWord = false;
  let unknown = false;
  const endWord = () => {
    if (inWord) {
      const assignment = words.length === 0 && !unknown && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
      if (!assignment) words.push(unknown ? undefined : word);
    }
    word = "";
    inWord = false;
    unknown = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  const variable = (at: number): [string | undefined, number] => {
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(command.slice(at));
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(command.slice(at));
    const m = braced ?? plain;
    if (!m) return [undefined, at + 1];
    const value = Object.hasOwn(vars, m[1]!) ? vars[m[1]!] : undefined;
    return [value, at + m[0].length];
  };
  let i = 0;
  while (i < command.length) {
    const c = command[i]!;
    if (c === "\\" && i + 1 < command.length) {
      if (command[i + 1] !== "\n") {
        word += command[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      const stop = end === -1 ? command.length : end;
      word += command.slice(i + 1, stop);
      inWord = true;
      i = stop + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < command.length && command[i] !== '"') {
        const d = command[i]!;
        if (d === "\\" && i + 1 < command.length) {
          word += command[i + 1];
          i += 2;
        } else if (d === "$") {
          const [value, next] = variable(i);
          if (value === undefined) unknown = true;
          else word += value;
          i = next;
        } else if (d === "`") {
          unknown = true;
          i++;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === "$") {
      const [value, next] = variable(i);
      if (value === undefined) unknown = true;
      else word += value;
      inWord = true;
      i = next;
    } else if (c === "`") {
      unknown = true;
      inWord = true;
      i++;
    } else if (c === "#" && !inWord) {
      const end = command.indexOf("\n", i);
      i = end === -1 ? command.length : end;
    } else if (";&|()\n".includes(c)) {
      endCommand();
      i++;
    } else if (c === " " || c === "\t") {
      endWord();
      i++;
    } else if ((c === "<" || c === ">") && !inWord) {
      // A redirection: its target is no word of the command.
      endWord();
      i++;
      while (command[i] === ">" || command[i] === "&" || command[i] === " ") i++;
      while (i < command.length && !" \t;&|()\n".includes(command[i]!)) i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  endCommand();
  return commands;
}

/**
 * Why `resolved` must not run (one line, starting with `what`), or undefined when every file it
 * would run lies where no agent can write. `extraWritable`:
 * more directories agents write (the running agent's own working directory).
 */
export function refusal(
  what: string,
  resolved: Resolved,
  trust: RunTrust,
  extraWritable: readonly string[] = [],
): string | undefined {
  const how = `to trust it, add it to "trusted_paths" in ${trust.configFile}`;
  for (const file of resolved.files) {
    const hit = writableOnTheWay(trust, extraWritable, file);
    if (hit) {
      const via = hit[0] === path.resolve(file) ? "" : ` (through ${hit[0]})`;
      return `${what} refused: it would run ${file}${via}, which an agent could have written (in ${hit[1]}); ${how}`;
    }
  }
  return undefined;
}
