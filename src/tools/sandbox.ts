// The OS sandbox for the commands warren runs for an agent (bash and hooks; MCP servers to
// come): bubblewrap (`bwrap`). The whole filesystem read-only except the agent's working
// directory, a private /tmp and the paths the config adds; a fresh /dev and /proc in a new PID
// namespace (so warren's own /proc/PID/environ is out of sight); warren's home (the embedded
// database's data directory and password file), the config file and libpq's password files
// hidden; no capabilities (root inside cannot unmount what hides them); network per the config.
// A write the sandbox refuses is the command's own error (EROFS), shown like any other.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { SandboxMode } from "../config/modes.js";
import { configPath, warrenHome } from "../paths.js";
import { buildToolEnv, EMPTY_SHELL_ENV, type ShellEnvConfig } from "./shell-env.js";

type Env = Record<string, string | undefined>;

export type { SandboxMode };

export interface SandboxConfig {
  /** auto: bubblewrap where it works, else unconfined with one line saying so; on: required. */
  mode: SandboxMode;
  /** Network inside the sandbox (default true); false adds `--unshare-net`. */
  network: boolean;
  /** Absolute paths writable besides the working directory and /tmp. */
  writable: string[];
  /** The bwrap binary (WARREN_BWRAP; default: `bwrap` on PATH). */
  bwrap: string;
}

export const DEFAULT_SANDBOX: SandboxConfig = {
  mode: "auto",
  network: true,
  writable: [],
  bwrap: "bwrap",
};

/** How a command is run: what the tool context carries (from the config; see shellSettingsOf). */
export interface ShellSettings {
  sandbox: SandboxConfig;
  env: ShellEnvConfig;
  /** The config file in force, hidden besides the default location. */
  configPath?: string;
}

export const INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

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

/** For tests: forget the probes, so a changed binary is tried again. */
export function resetSandboxProbes(): void {
  probes.clear();
  warmProbes.clear();
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
    const net = config.network ? "network on" : "network off";
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
  if (probe.ok) return undefined;
  return `sandbox: ${probe.reason}, so bash runs unconfined; ${INSTALL_HINT}`;
}

/** The program and arguments to spawn, and its environment; or why it may not run. */
export type Launch =
  | { ok: true; file: string; args: string[]; env: Record<string, string>; sandboxed: boolean }
  | { ok: false; message: string };

/**
 * No `--new-session`: the command stays in the process group bash.ts kills on timeout, abort and
 * lease loss (it has no controlling terminal anyway: it is spawned detached, stdin closed).
 */
const BASE_ARGS = ["--die-with-parent", "--unshare-pid", "--cap-drop", "ALL"];

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
  // The private /tmp starts empty: a TMPDIR pointing elsewhere would not be writable.
  childEnv.TMPDIR = "/tmp";
  const args = bwrapArgs(sandbox, cwd, hiddenForCommand(env, settings?.configPath));
  return {
    ok: true,
    file: sandbox.bwrap,
    args: [...args, "--", ...argv],
    env: childEnv,
    sandboxed: true,
  };
}

/** What a command must not see: warren's home, its config file, libpq's password files. */
/**
 * The paths a command's sandbox hides, warren's home made first: it is hidden only if it exists,
 * so a command could otherwise create it (and the MCP allow store in it, mcp/allow.ts) where it
 * happens to be writable (a HOME under cwd). Every sandbox, per call or warm, is built from this.
 */
function hiddenForCommand(env: Env, extraConfig?: string): string[] {
  try {
    fs.mkdirSync(warrenHome(env), { recursive: true, mode: 0o700 });
  } catch {
    // Cannot be made: then nothing can be written there by the command either.
  }
  return hiddenPaths(env, extraConfig);
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

function bwrapArgs(sandbox: SandboxConfig, cwd: string, hidden: string[]): string[] {
  const args = [...BASE_ARGS];
  if (!sandbox.network) args.push("--unshare-net");
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  const work = realPath(cwd);
  for (const dir of [work, ...sandbox.writable.map(realPath)]) {
    if (exists(dir)) args.push("--bind", dir, dir);
  }
  // A git worktree (an isolated child's) reads its repository's git directory, which may lie
  // under the private /tmp or elsewhere: visible, and read-only even inside a writable path, so a
  // child cannot plant a hook that runs when the person merges (`warren merge` commits for it).
  const common = worktreeGitDir(work);
  if (common) args.push("--ro-bind", common, common);
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
  args.push("--chdir", work);
  return args;
}

/** The repository's git directory when `dir` is a linked worktree (`.git` is a file), else null. */
function worktreeGitDir(dir: string): string | null {
  try {
    const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(path.join(dir, ".git"), "utf8"));
    if (!pointer) return null;
    const own = path.resolve(dir, pointer[1]!.trim());
    const commondir = fs.readFileSync(path.join(own, "commondir"), "utf8").trim();
    const common = realPath(path.resolve(own, commondir));
    return exists(common) ? common : null;
  } catch {
    return null; // not a linked worktree (a directory .git, none, unreadable)
  }
}

function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
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

// ---------------------------------------------------------------------------------------------
// Warm sandboxes: starting bubblewrap costs 5-40 ms a call (the namespaces and the mounts), far
// over the 5 ms budget. So `bash` keeps a started sandbox per (agent, settings, working
// directory), idle between calls, and runs each call inside it by entering its namespaces
// (`nsenter`) and dropping every capability (`setpriv`): a plain spawn otherwise. The sandbox is
// the same bwrap command line a per-call launch would use, so it holds the same mounts; hidden
// paths are computed per call and are part of the key, so a path created since is hidden by a
// new sandbox. A sandbox serves one call at a time, and goes back to the pool only when that call
// ended cleanly and left nothing behind: no process, nothing in /tmp or /dev. Otherwise (a
// timeout, an abort, a background job, a file in /tmp) it is destroyed, which kills every
// process in it, so each call still starts in an empty sandbox with an empty /tmp. Its keeper
// (PID 1 inside) holds one harmless capability the commands lack, so no command can ptrace it
// or read its memory, and signals from inside do not reach a PID 1. Warren's death takes it
// down (--die-with-parent); an idle one is closed after IDLE_MS.

/** A started sandbox: bwrap, and its keeper (PID 1 in it) whose namespaces calls enter. */
interface Warm {
  key: string;
  bwrap: ChildProcess;
  /** The keeper's host pid. */
  pid: number;
  /** `mnt:[…]` of the sandbox, checked before each entry (a reused pid is never entered). */
  mntNs: string;
  enter: string[];
  /** /tmp and /dev as they were at start (scratchListing): a call that adds to them spoils it. */
  scratch: string;
  dead: boolean;
  idleTimer?: NodeJS.Timeout;
  /** The working directory (the same inside and out). */
  cwd: string;
  tools: Tools;
  /** A bash already entered while the sandbox is idle, waiting for the next call's command. */
  standby?: Standby;
}

interface Standby {
  child: ChildProcess;
  /** The environment it was started with: used only by a call with the same one. */
  envKey: string;
  exited: boolean;
}

/**
 * What a standby bash runs: it reads the call's command (NUL-terminated) from fd 3, closes fd 3,
 * and evaluates it, so the command runs as in `bash -c`: $0 is bash, no arguments, no fd 3.
 */
const STANDBY_SCRIPT = `IFS= read -r -d '' -u 3 __warren_command || exit 125
exec 3<&-
eval "$__warren_command"`;

const IDLE_MS = 30_000;
const MAX_IDLE_PER_KEY = 2;
const READY_TIMEOUT_MS = 10_000;
/** A capability the keeper keeps and the commands lack: it makes the keeper un-ptraceable. */
const KEEPER_CAP = "CAP_WAKE_ALARM";
const KEEPER = ["sh", "-c", "echo ready; exec sleep infinity >/dev/null 2>&1"];
const SETPRIV_ARGS = [
  "--no-new-privs",
  "--bounding-set=-all",
  "--inh-caps=-all",
  "--ambient-caps=-all",
];

const idle = new Map<string, Warm[]>();
const live = new Set<Warm>();

/** A warm launch: spawn `file args` as usual, then tell the session how the call ended. */
export interface WarmLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
  /**
   * A bash already entered into the sandbox (with this env and cwd): use it instead of spawning,
   * and write `input` (the command) to its fd 3 once its output is being read.
   */
  standby?: ChildProcess;
  input?: string;
  /** Right after the spawned process exits: kills the sandbox if the call left a process. */
  afterExit(): void;
  /** When the call is over; `clean` false (timeout, abort, error) destroys the sandbox. */
  release(clean: boolean): void;
}

interface Tools {
  nsenter: string;
  setpriv: string;
}
const warmProbes = new Map<string, Promise<Tools | null>>();

/**
 * How to run `bash -c command` for `owner` (an agent id) in `cwd` inside a warm sandbox; undefined when
 * there is none to use (sandbox off, bwrap missing, nsenter/setpriv missing or not working here):
 * the caller then uses shellLaunch, which runs bwrap per call or refuses.
 */
export async function warmLaunch(
  settings: ShellSettings | undefined,
  cwd: string,
  command: string,
  owner = "",
  env: Env = process.env,
): Promise<WarmLaunch | undefined> {
  const sandbox = settings?.sandbox ?? DEFAULT_SANDBOX;
  if (sandbox.mode === "off") return undefined;
  if (!(await probeBwrap(sandbox.bwrap)).ok) return undefined;
  const tools = await probeWarm(sandbox.bwrap);
  if (!tools) return undefined;
  const args = bwrapArgs(sandbox, cwd, hiddenForCommand(env, settings?.configPath));
  let id: string;
  try {
    const st = fs.statSync(realPath(cwd));
    id = `${st.dev}:${st.ino}`; // a directory removed and made again is a new sandbox
  } catch {
    return undefined; // no working directory: let the per-call launch say so
  }
  const key = JSON.stringify([sandbox.bwrap, owner, id, args]);
  let warm: Warm;
  try {
    warm =
      takeIdle(key) ?? (await startWarm(key, sandbox.bwrap, args, tools, sandbox.network, cwd));
  } catch {
    return undefined; // could not start: the per-call launch shows bwrap's own error
  }
  const childEnv = buildToolEnv(settings?.env ?? EMPTY_SHELL_ENV, env);
  childEnv.TMPDIR = "/tmp";
  const envKey = JSON.stringify(childEnv);
  const ready = warm.standby;
  warm.standby = undefined;
  let standby: ChildProcess | undefined;
  if (ready && !ready.exited && ready.envKey === envKey && !command.includes("\0")) {
    standby = ready.child;
  } else if (ready) killStandby(ready);
  let released = false;
  /** afterExit found the sandbox empty: no process is left that could change it since. */
  let empty = false;
  return {
    file: tools.nsenter,
    args: [...warm.enter, tools.setpriv, ...SETPRIV_ARGS, "bash", "-c", command],
    env: childEnv,
    ...(standby && { standby, input: `${command}\0` }),
    afterExit() {
      if (warm.dead) return;
      if (leftovers(warm)) destroyWarm(warm);
      else empty = true;
    },
    release(clean) {
      if (released) return;
      released = true;
      if (!clean || warm.dead || (!empty && leftovers(warm))) destroyWarm(warm);
      else putIdle(warm, childEnv);
    },
  };
}

/** Destroys every warm sandbox (tests; a process that wants none left). */
export function closeWarmSandboxes(): void {
  for (const warm of [...live]) destroyWarm(warm);
}

/** For tests: how many warm sandboxes exist (idle or in use). */
export function warmSandboxCount(): number {
  return live.size;
}

/** For tests: the keepers' host pids, idle or in use. */
export function warmSandboxPids(): number[] {
  return [...live].map((warm) => warm.pid);
}

function takeIdle(key: string): Warm | undefined {
  const list = idle.get(key);
  while (list?.length) {
    const warm = list.pop()!;
    clearTimeout(warm.idleTimer);
    if (list.length === 0) idle.delete(key);
    // The keeper must still be the sandbox's (never enter a reused pid's namespaces).
    if (!warm.dead && nsOf(warm.pid) === warm.mntNs) return warm;
    destroyWarm(warm);
  }
  return undefined;
}

function putIdle(warm: Warm, env: Record<string, string>): void {
  const list = idle.get(warm.key) ?? [];
  if (list.length >= MAX_IDLE_PER_KEY) {
    destroyWarm(warm);
    return;
  }
  list.push(warm);
  idle.set(warm.key, list);
  warm.idleTimer = setTimeout(() => destroyWarm(warm), IDLE_MS);
  warm.idleTimer.unref();
  // The next call's bash, entered now: nsenter, setpriv and bash's start leave the call's path.
  warm.standby = startStandby(warm, env);
}

function startStandby(warm: Warm, env: Record<string, string>): Standby | undefined {
  let child: ChildProcess;
  try {
    child = spawn(
      warm.tools.nsenter,
      [...warm.enter, warm.tools.setpriv, ...SETPRIV_ARGS, "bash", "-c", STANDBY_SCRIPT],
      { cwd: warm.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe", "pipe"] },
    );
  } catch {
    return undefined;
  }
  const standby: Standby = { child, envKey: JSON.stringify(env), exited: false };
  child.on("exit", () => (standby.exited = true));
  child.on("error", () => (standby.exited = true));
  (child.stdio[3] as NodeJS.WritableStream).on("error", () => undefined);
  // Waiting must not keep warren's process alive (the call that takes it refs it again).
  child.unref();
  for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
  return standby;
}

function killStandby(standby: Standby): void {
  try {
    if (!standby.exited && standby.child.pid) process.kill(-standby.child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function destroyWarm(warm: Warm): void {
  if (warm.standby) killStandby(warm.standby);
  warm.standby = undefined;
  if (!warm.dead) {
    warm.dead = true;
    // Killing the keeper (PID 1 inside) kills every process in the sandbox, setsid or not.
    try {
      if (nsOf(warm.pid) === warm.mntNs) process.kill(warm.pid, "SIGKILL");
    } catch {
      // already gone
    }
    warm.bwrap.kill("SIGKILL");
  }
  clearTimeout(warm.idleTimer);
  live.delete(warm);
  const list = idle.get(warm.key);
  if (list) {
    const at = list.indexOf(warm);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) idle.delete(warm.key);
  }
}

/** Whether the last call left anything in the sandbox: a process, a file in /tmp or /dev. */
function leftovers(warm: Warm): boolean {
  try {
    const children = fs.readFileSync(`/proc/${warm.pid}/task/${warm.pid}/children`, "utf8");
    if (children.trim() !== "") return true;
    const limit = warm.scratch.split("\n").length;
    if (scratchListing(`/proc/${warm.pid}/root`, limit) !== warm.scratch) return true;
    return nsOf(warm.pid) !== warm.mntNs;
  } catch {
    return true; // the keeper is gone, or unreadable: never reuse it
  }
}

/**
 * What the sandbox's own writable places hold (its private /tmp and /dev, walked without
 * crossing into the working directory or another mount): the same after a clean call as at start.
 */
function scratchListing(root: string, limit = Infinity): string {
  const found: string[] = [];
  const walk = (dir: string, rel: string, dev: number) => {
    for (const name of fs.readdirSync(dir).sort()) {
      // More entries than at start: spoiled, whatever the rest holds (never walk a huge tree).
      if (found.length >= limit)
        throw new Error("more in the sandbox's /tmp or /dev than at start");
      const st = fs.lstatSync(path.join(dir, name));
      found.push(`${rel}/${name}`);
      if (st.isDirectory() && st.dev === dev) walk(path.join(dir, name), `${rel}/${name}`, dev);
    }
  };
  for (const top of ["tmp", "dev"]) {
    const dir = path.join(root, top);
    walk(dir, top, fs.statSync(dir).dev);
  }
  return found.join("\n");
}

function nsOf(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** Starts bwrap with the keeper and waits until it runs inside (every mount in place). */
function startWarm(
  key: string,
  bwrap: string,
  args: string[],
  tools: Tools,
  network: boolean,
  cwd: string,
): Promise<Warm> {
  const root = process.getuid?.() === 0;
  // Unprivileged bwrap nests a second user namespace to show the caller's uid, and that one
  // cannot enter the namespaces it does not own: one user namespace, uid 0 inside, instead.
  const user = root ? [] : ["--unshare-user", "--uid", "0", "--gid", "0"];
  const chdirAt = args.lastIndexOf("--chdir");
  const full = [
    ...user,
    ...args.slice(0, chdirAt),
    "--cap-add",
    KEEPER_CAP,
    "--as-pid-1",
    "--info-fd",
    "3",
    ...args.slice(chdirAt),
    "--",
    ...KEEPER,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bwrap, full, {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    let out = "";
    let info = "";
    let err = "";
    let infoDone = false;
    let settled = false;
    const timer = setTimeout(
      () => fail(new Error("bwrap did not start in time")),
      READY_TIMEOUT_MS,
    );
    const streams = [child.stdout!, child.stderr!, child.stdio[3] as NodeJS.ReadableStream];
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(e);
    };
    const check = () => {
      if (settled || !infoDone || !out.includes("ready\n")) return;
      const pid = Number(/"child-pid":\s*(\d+)/.exec(info)?.[1]);
      const mnt = /"mnt-namespace":\s*(\d+)/.exec(info)?.[1];
      const mntNs = nsOf(pid);
      if (!pid || !mnt || mntNs !== `mnt:[${mnt}]`) return fail(new Error("bwrap: no sandbox"));
      let scratch: string;
      try {
        scratch = scratchListing(`/proc/${pid}/root`);
      } catch (e) {
        return fail(e as Error);
      }
      settled = true;
      clearTimeout(timer);
      for (const s of streams) (s as unknown as { destroy(): void }).destroy();
      child.unref();
      const ownUser = fs.readlinkSync("/proc/self/ns/user");
      const enterUser = nsOfType(pid, "user") !== ownUser;
      const enter = [
        "--target",
        String(pid),
        ...(enterUser ? ["--user", "--preserve-credentials"] : []),
        "--mount",
        "--pid",
        ...(network ? [] : ["--net"]),
        "--root",
        "--wd",
      ];
      const warm: Warm = { key, bwrap: child, pid, mntNs, enter, scratch, dead: false, cwd, tools };
      live.add(warm);
      child.on("exit", () => destroyWarm(warm));
      resolve(warm);
    };
    child.on("error", (e) => fail(e));
    child.on("exit", () => fail(new Error(`bwrap: ${err.trim().split("\n")[0] || "exited"}`)));
    child.stdout!.setEncoding("utf8").on("data", (t: string) => {
      out += t;
      check();
    });
    child.stderr!.setEncoding("utf8").on("data", (t: string) => (err += t));
    const infoStream = child.stdio[3] as NodeJS.ReadableStream;
    infoStream.setEncoding("utf8");
    infoStream.on("data", (t: string) => {
      info += t;
      if (info.includes("}")) {
        infoDone = true;
        check();
      }
    });
    infoStream.on("error", () => undefined);
  });
}

function nsOfType(pid: number, type: string): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/${type}`);
  } catch {
    return undefined;
  }
}

/**
 * Whether warm sandboxes work here: nsenter and setpriv found (util-linux), and a call entered
 * into a started sandbox runs with no capability. Tried once per process and bwrap binary.
 */
function probeWarm(bwrap: string): Promise<Tools | null> {
  let probe = warmProbes.get(bwrap);
  if (!probe) {
    probe = runWarmProbe(bwrap);
    warmProbes.set(bwrap, probe);
  }
  return probe;
}

async function runWarmProbe(bwrap: string): Promise<Tools | null> {
  const nsenter = findProgram("nsenter");
  const setpriv = findProgram("setpriv");
  if (!nsenter || !setpriv) return null;
  const tools = { nsenter, setpriv };
  const args = [...BASE_ARGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  args.push("--tmpfs", "/tmp", "--chdir", "/");
  let warm: Warm;
  try {
    warm = await startWarm("probe", bwrap, args, tools, true, "/");
  } catch {
    return null;
  }
  try {
    const status = await new Promise<string>((resolve) => {
      const child = spawn(
        nsenter,
        [...warm.enter, setpriv, ...SETPRIV_ARGS, "cat", "/proc/self/status"],
        { stdio: ["ignore", "pipe", "ignore"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
      );
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (t: string) => (text += t));
      child.on("error", () => resolve(""));
      child.on("close", (code) => resolve(code === 0 ? text : ""));
    });
    const cap = (name: string) => new RegExp(`^${name}:\\s*0+$`, "m").test(status);
    const sealed = /^NoNewPrivs:\s*1$/m.test(status);
    return cap("CapPrm") && cap("CapEff") && cap("CapBnd") && sealed ? tools : null;
  } finally {
    destroyWarm(warm);
  }
}

function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(":")) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    const file = path.join(dir, name);
    if (exists(file)) return file;
  }
  return undefined;
}
