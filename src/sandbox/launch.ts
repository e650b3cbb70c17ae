// The OS sandbox for the commands warren runs for an agent (bash and hooks; MCP servers to
// come): bubblewrap (`bwrap`). The whole filesystem read-only except the agent's working
// directory, a private /tmp and the paths the config adds; a fresh /dev and /proc in a new PID
// namespace (so warren's own /proc/PID/environ is out of sight); warren's home (the embedded
// database's data directory and password file), the config file and libpq's password files
// hidden; no capabilities (root inside cannot unmount what hides them); network per the config.
// A write the sandbox refuses is the command's own error (EROFS), shown like any other.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { warrenPackage } from "../package-root.js";
import { configPath, repositoryRoot, warrenHome } from "../paths.js";
import { buildToolEnv, EMPTY_SHELL_ENV } from "./env.js";
import { gateFor, type Gate } from "./network/gate.js";
import { describeNetwork, unsharesNetwork } from "./network/rules.js";
import { CONFIG_ENTRIES, WORKTREES_ENTRY } from "./protected-paths.js";
import { seccompProgram, trustedSeccomp, type Seccomp } from "./seccomp.js";
import {
  DEFAULT_SANDBOX,
  INSTALL_HINT,
  type SandboxConfig,
  type ShellSettings,
} from "./settings.js";

type Env = Record<string, string | undefined>;

export type Probe = { ok: true } | { ok: false; reason: string };

const probes = new Map<string, Promise<Probe>>();

/**
 * Whether `bwrap` works here (installed, and user namespaces allowed): tried once per process
 * and binary with the flags every command uses, then cached.
 */
export function probeBwrap(bwrap: string): Promise<Probe> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = runProbe(bwrap);
    probes.set(bwrap, probe);
  }
  return probe;
}

function runProbe(bwrap: string): Promise<Probe> {
  return new Promise((resolve) => {
    const args = [...BASE_ARGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"];
    let stderr = "";
    let child;
    try {
      child = spawn(bwrap, args, { stdio: ["ignore", "ignore", "pipe"] });
    } catch (err) {
      resolve({ ok: false, reason: `${bwrap}: ${(err as Error).message}` });
      return;
    }
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.on("error", (err: NodeJS.ErrnoException) => {
      resolve({
        ok: false,
        reason: err.code === "ENOENT" ? `${bwrap} not found` : `${bwrap}: ${err.message}`,
      });
    });
    child.on("close", (code) => {
      if (code === 0) resolve({ ok: true });
      else {
        const line = stderr.trim().split("\n")[0] || `exit code ${code}`;
        resolve({ ok: false, reason: `${bwrap} does not work here: ${line.slice(0, 200)}` });
      }
    });
  });
}

/** For tests: forget the bwrap probes (warm.ts resetSandboxProbes forgets all). */
export function resetBwrapProbes(): void {
  probes.clear();
}

export interface SandboxStatus {
  /** on: commands run in bubblewrap; off: the config turned it off; unavailable: bwrap missing. */
  state: "on" | "off" | "unavailable";
  /** One line for people: the first screen, `warren doctor`, the start notice. */
  line: string;
}

export async function sandboxStatus(config: SandboxConfig): Promise<SandboxStatus> {
  if (config.mode === "off") {
    return { state: "off", line: 'off (sandbox: "off" in the config): bash runs unconfined' };
  }
  const probe = await probeBwrap(config.bwrap);
  if (probe.ok) {
    const net = describeNetwork(config.network);
    return { state: "on", line: `bubblewrap (read-only but the working directory, ${net})` };
  }
  if (config.mode === "on") {
    return {
      state: "unavailable",
      line: `unavailable (${probe.reason}): sandbox is "on", so bash refuses to run; ${INSTALL_HINT}`,
    };
  }
  return {
    state: "unavailable",
    line: `unavailable (${probe.reason}): bash runs unconfined; ${INSTALL_HINT}`,
  };
}

/**
 * The line said once at start when `auto` finds no working bwrap (undefined otherwise: the
 * sandbox is on, or the person turned it off or on knowingly).
 */
export async function sandboxStartNotice(config: SandboxConfig): Promise<string | undefined> {
  if (config.mode !== "auto") return undefined;
  const probe = await probeBwrap(config.bwrap);
  if (!probe.ok) return `sandbox: ${probe.reason}, so bash runs unconfined; ${INSTALL_HINT}`;
  if (config.network === true) return undefined;
  const seccomp = seccompProgram();
  if (seccomp.ok) return undefined;
  return `sandbox: ${seccomp.reason}, so with the network off commands can still reach Unix sockets (only --unshare-net holds)`;
}

/**
 * With the network off or a gate (the bridge, outside the filter, is then the only way to
 * warren's proxy): the filter that refuses Unix sockets (seccomp.ts) for a sandbox writable in
 * `writable`, or why there is none (`auto` runs without it; `on` refuses).
 */
export function networkFilter(sandbox: SandboxConfig, writable: string[]): Seccomp | undefined {
  if (sandbox.network === true) return undefined;
  return trustedSeccomp(writable);
}

/**
 * What apply-seccomp needs to make its nested user namespace as uid 0 (mapping uid 0 takes
 * CAP_SETFCAP since Linux 5.12): it has it; the command it starts in that namespace has no
 * capability outside it, and the mounts it inherits stay locked (read-only, hidden).
 */
export const FILTER_CAP = ["--cap-add", "CAP_SETFCAP"];

/** The line a refusal says when the sandbox is `on` and the filter is missing. */
export function filterRefusal(reason: string): string {
  return `the sandbox is required (sandbox: "on") with the network off, but ${reason}: Unix sockets would stay reachable; nothing was run`;
}

/** The program and arguments to spawn, and its environment; or why it may not run. */
export type Launch =
  | { ok: true; file: string; args: string[]; env: Record<string, string>; sandboxed: boolean }
  | { ok: false; message: string };

/**
 * No `--new-session`: the command stays in the process group bash.ts kills on timeout, abort and
 * lease loss (it has no controlling terminal anyway: it is spawned detached, stdin closed).
 */
export const BASE_ARGS = [
  "--die-with-parent",
  "--unshare-pid",
  "--unshare-ipc",
  "--cap-drop",
  "ALL",
];

/**
 * How to run `argv` (program first) for an agent in `cwd` under `settings` (default: sandbox
 * auto, no extra environment). Refuses only when the sandbox is `on` and bwrap does not work.
 */
export async function shellLaunch(
  settings: ShellSettings | undefined,
  cwd: string,
  argv: string[],
  env: Env = process.env,
): Promise<Launch> {
  const sandbox = settings?.sandbox ?? DEFAULT_SANDBOX;
  const childEnv = buildToolEnv(settings?.env ?? EMPTY_SHELL_ENV, env);
  const plain: Launch = {
    ok: true,
    file: argv[0]!,
    args: argv.slice(1),
    env: childEnv,
    sandboxed: false,
  };
  if (sandbox.mode === "off") return plain;
  const probe = await probeBwrap(sandbox.bwrap);
  if (!probe.ok) {
    if (sandbox.mode === "on") {
      return {
        ok: false,
        message: `the sandbox is required (sandbox: "on") but ${probe.reason}; nothing was run`,
      };
    }
    return plain;
  }
  const linked = linkedWorkingDirectory(cwd);
  if (linked) return { ok: false, message: linked };
  const filter = networkFilter(sandbox, writablePaths(sandbox, cwd));
  if (filter && !filter.ok && sandbox.mode === "on") {
    return { ok: false, message: filterRefusal(filter.reason) };
  }
  // The private /tmp starts empty: a TMPDIR pointing elsewhere would not be writable.
  childEnv.TMPDIR = "/tmp";
  // The network gate (network/gate.ts): its proxy, and the bridge that starts the command.
  let gate: Gate | undefined;
  try {
    gate = await gateFor(sandbox.network, env, settings?.networkAsk);
  } catch (err) {
    const why = (err as Error).message;
    return {
      ok: false,
      message: `the network gate's proxy could not start (${why}); nothing was run`,
    };
  }
  const args = bwrapArgs(
    sandbox,
    cwd,
    hiddenForCommand(env, settings?.configPath),
    settings?.stateDir,
    gate,
  );
  if (filter?.ok) insertBeforeChdir(args, filter.binds ?? []);
  const command = [...(filter?.ok ? [filter.program] : []), ...argv];
  return {
    ok: true,
    file: sandbox.bwrap,
    args: [
      ...args.slice(0, BASE_ARGS.length),
      ...(filter?.ok ? FILTER_CAP : []),
      ...args.slice(BASE_ARGS.length),
      "--",
      ...(gate ? gate.wrap(command) : command),
    ],
    env: { ...childEnv, ...gate?.env },
    sandboxed: true,
  };
}

/** What a command must not see: warren's home, its config file, libpq's password files. */
/**
 * The paths a command's sandbox hides, warren's home made first: it is hidden only if it exists,
 * so a command could otherwise create it (and the MCP allow store in it, mcp/allow.ts) where it
 * happens to be writable (a HOME under cwd). Every sandbox, per call or warm, is built from this.
 */
export function hiddenForCommand(env: Env, extraConfig?: string): string[] {
  // The config file's directory too: made, it is bound read-only where a writable directory
  // holds it (lockedAncestors), so a command cannot create a config the next start would read.
  for (const dir of [warrenHome(env), path.dirname(configPath(env))]) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // Cannot be made: then nothing can be written there by the command either.
    }
  }
  return hiddenPaths(env, extraConfig);
}

/**
 * The directories between a writable directory and a hidden path inside it (warren started in
 * $HOME: ~/.local, ~/.local/share, ~/.config, ~/.config/warren): bound read-only, each a mount
 * point, so no command renames one away to walk around the hiding, or writes a new config there.
 */
function lockedAncestors(writable: string[], hidden: string[]): string[] {
  const locked = new Set<string>();
  for (const target of hidden) {
    const real = realPath(target);
    for (const dir of writable) {
      if (!real.startsWith(dir + path.sep)) continue;
      for (let up = path.dirname(real); up !== dir && up.startsWith(dir); up = path.dirname(up)) {
        if (exists(up)) locked.add(up);
      }
    }
  }
  // Outer first: an inner bind on top of its read-only parent.
  return [...locked].sort((a, b) => a.length - b.length);
}

export function hiddenPaths(env: Env, extraConfig?: string): string[] {
  const home = env.HOME || os.homedir();
  const paths = [
    warrenHome(env),
    configPath(env),
    extraConfig,
    env.PGPASSFILE,
    path.join(home, ".pgpass"),
    env.PGSERVICEFILE,
    path.join(home, ".pg_service.conf"),
  ];
  return [...new Set(paths.filter((p): p is string => !!p).map((p) => path.resolve(p)))];
}

/**
 * warren's own package when it lies under /tmp (a checkout there): the private /tmp would hide it,
 * and `warren` run inside the sandbox would not find its own code. Bound read-only, as every
 * other path outside the writable ones is seen.
 */
export function packageUnderTmp(root: string): string[] {
  return root.startsWith("/tmp/") ? ["--ro-bind", root, root] : [];
}

/** Adds `extra` mounts to a bwrapArgs result, after its own and before its `--chdir`. */
export function insertBeforeChdir(args: string[], extra: string[]): void {
  args.splice(args.lastIndexOf("--chdir"), 0, ...extra);
}

export function bwrapArgs(
  sandbox: SandboxConfig,
  cwd: string,
  hidden: string[],
  stateDir?: string,
  gate?: Gate,
): string[] {
  const args = [...BASE_ARGS];
  if (unsharesNetwork(sandbox.network)) args.push("--unshare-net");
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  // Before the writable paths, so one that holds it stays writable on top.
  args.push(...packageUnderTmp(realPath(warrenPackage().root)));
  const work = realPath(cwd);
  // The project's root above the working directory, read-only, as it is anywhere outside /tmp:
  // a repository under /tmp would otherwise vanish above an agent started in its subfolder, and
  // a hook named from `$CLAUDE_PROJECT_DIR` with it. First, so the writable binds go on top.
  const project = repositoryRoot(work);
  if (project && project !== work && isUnder(project, "/tmp")) {
    args.push("--ro-bind", project, project);
  }
  const writable = writablePaths(sandbox, cwd).filter(exists);
  for (const dir of writable) args.push("--bind", dir, dir);
  for (const dir of writable) args.push(...configMounts(dir, writable));
  // `.warren/worktrees/` is read-only with the rest of `.warren/`: a parent's bash never writes
  // its isolated children's worktrees, so it cannot swap one for a link to anywhere that the
  // child's sandbox would then bind writable. A child's own directory, where the config makes its
  // repository writable too, is writable again on top (its own configuration entries after it).
  if (writable.some((dir) => isUnder(work, path.join(dir, WORKTREES_ENTRY)))) {
    args.push("--bind", work, work, ...configMounts(work, writable));
  }
  // A git worktree (an isolated child's) reads its repository's git directory, which may lie
  // under the private /tmp or elsewhere: visible, and read-only even inside a writable path, so a
  // child cannot plant a hook that runs when the person merges (`warren merge` commits for it).
  const common = worktreeGitDir(work);
  if (common) args.push("--ro-bind", common, common);
  for (const dir of lockedAncestors(writable, hidden)) args.push("--ro-bind", dir, dir);
  // Last, so a writable directory that holds one of them still hides it.
  for (const target of hidden) {
    const real = realPath(target);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(real);
    } catch {
      continue; // not there: nothing to hide
    }
    if (stat.isDirectory()) args.push("--tmpfs", real);
    else args.push("--ro-bind", "/dev/null", real);
  }
  if (stateDir) {
    // After the hiding: a server's state under warren's home is its own, and writable.
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const real = realPath(stateDir);
    args.push("--bind", real, real);
  }
  if (gate) args.push(...gate.binds);
  args.push("--chdir", work);
  return args;
}

/**
 * What configures warren (and the tools it reads the config of) in a writable directory: bound
 * read-only on top, each a mount point that cannot be renamed, removed or replaced either. The
 * `.git` directory itself is bound writable (git works in it) but as a mount point it stays where
 * it is; a `.git` file (a worktree's pointer) is read-only. `.warren/worktrees/` stays writable:
 * isolated children work there. Only what exists is bound: bwrap would otherwise create the
 * mount point in the person's tree, so an absent one stays creatable (its readers must not trust
 * a file created during a tree).
 */

function configMounts(dir: string, writable: string[]): string[] {
  const args: string[] = [];
  const bind = (rel: string, flag: string) => {
    const at = path.join(dir, rel);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(at);
    } catch {
      return undefined; // absent: left as it is (see above)
    }
    if (!stat.isSymbolicLink()) {
      args.push(flag, at, at);
      return stat;
    }
    // A link (which a command may have made, pointing anywhere) is bound at its target only where
    // that lies in a writable path, the one place binding it read-only protects anything; the
    // link itself stays movable. Anywhere else the target is read-only already, and a mount there
    // would be the command's choice: `/proc` or `/tmp` over the sandbox's own, or a target that
    // cannot be mounted failing every later launch in this directory (hooks included).
    const real = realPath(at);
    if (!exists(real) || !writable.some((w) => real === w || isUnder(real, w))) return undefined;
    args.push(flag, real, real);
    return fs.statSync(real);
  };
  const git = bind(".git", "--ro-bind");
  // A `.git` directory's contents stay writable (git works in it), but for its hooks and config.
  if (git?.isDirectory()) args.splice(args.length - 3, 1, "--bind");
  for (const rel of CONFIG_ENTRIES) bind(rel, "--ro-bind");
  return args;
}

/**
 * Why `cwd` cannot be a sandbox's working directory: it is reached through a link now. An agent's
 * directory is a real path when it is made (the process's own, a worktree git made), so a link on
 * the way was made since, by a command that could write there; binding where it leads would hand
 * that place to the next command, writable.
 */
export function linkedWorkingDirectory(cwd: string): string | undefined {
  const resolved = path.resolve(cwd);
  const real = realPath(cwd);
  if (real === resolved) return undefined;
  return `the working directory ${resolved} is reached through a link (to ${real}) now; nothing was run`;
}

/** The places a sandbox may write (real paths): the working directory first, then the config's. */
export function writablePaths(sandbox: SandboxConfig, cwd: string): string[] {
  return [realPath(cwd), ...sandbox.writable.map(realPath)];
}

/**
 * The repository's common git directory when `dir` is a linked worktree that repository really
 * registered, else null. `dir/.git` is the command's to write (an agent may make one where there
 * was none), so what it names is bound only when the registration it points at, found through the
 * common directory it names, points back at `dir/.git` itself: a made-up pointer (`commondir`
 * naming `/proc` or `/tmp`, which would put the host's processes or its /tmp over the sandbox's
 * own) finds no such registration there, and a real one of another worktree points elsewhere.
 */
function worktreeGitDir(dir: string): string | null {
  try {
    const dotGit = path.join(dir, ".git");
    if (!fs.lstatSync(dotGit).isFile()) return null;
    const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, "utf8"));
    if (!pointer) return null;
    const own = fs.realpathSync(path.resolve(dir, pointer[1]!.trim()));
    const commondir = fs.readFileSync(path.join(own, "commondir"), "utf8").trim();
    const common = fs.realpathSync(path.resolve(own, commondir));
    const registered = fs.realpathSync(path.join(common, "worktrees", path.basename(own)));
    const back = fs.readFileSync(path.join(own, "gitdir"), "utf8").trim();
    const backTo = fs.realpathSync(path.resolve(own, back));
    return registered === own && backTo === fs.realpathSync(dotGit) ? common : null;
  } catch {
    return null; // not a linked worktree (a directory .git, none, unreadable, half made)
  }
}

function isUnder(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

export function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

export function exists(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}
