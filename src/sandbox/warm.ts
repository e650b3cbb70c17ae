// Warm sandboxes for bash: a started bubblewrap per (agent, settings, working directory) whose
// namespaces each call enters (see below). The per-call launch and the mounts are launch.ts's.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildToolEnv, EMPTY_SHELL_ENV } from "./env.js";
import { gateFor, type Gate } from "./network/gate.js";
import {
  linkedWorkingDirectory,
  BASE_ARGS,
  bwrapArgs,
  insertBeforeChdir,
  exists,
  hiddenForCommand,
  networkFilter,
  probeBwrap,
  realPath,
  resetBwrapProbes,
  writablePaths,
} from "./launch.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "./settings.js";

type Env = Record<string, string | undefined>;

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
  /**
   * /tmp, /dev and the tmpfs over each hidden directory as they were at start (scratchListing):
   * a call that adds to them spoils it.
   */
  scratch: string;
  /** Those places, relative to the sandbox's root. */
  scratchDirs: string[];
  dead: boolean;
  idleTimer?: NodeJS.Timeout;
  /** The working directory (the same inside and out). */
  cwd: string;
  tools: Tools;
  /** What runs each call's bash: setpriv, then (network off) the Unix socket filter. */
  prefix: string[];
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

const SETPRIV_FILTER_ARGS = [
  "--no-new-privs",
  "--bounding-set=-all,+setfcap",
  "--inh-caps=-all,+setfcap",
  "--ambient-caps=-all,+setfcap",
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

/** For tests: forget the probes (bwrap's and the warm pool's), so a changed binary is tried again. */
export function resetSandboxProbes(): void {
  resetBwrapProbes();
  warmProbes.clear();
}

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
  // A working directory reached through a link: the per-call launch refuses with the reason.
  if (linkedWorkingDirectory(cwd)) return undefined;
  const filter = networkFilter(sandbox, writablePaths(sandbox, cwd));
  // No filter where one is required: the per-call launch refuses with the reason.
  if (filter && !filter.ok && sandbox.mode === "on") return undefined;
  const program = filter?.ok ? filter.program : undefined;
  // The network gate's proxy and bridge (network/gate.ts): the bridge is the keeper.
  let gate: Gate | undefined;
  try {
    gate = await gateFor(sandbox.network, env, settings?.networkAsk);
  } catch {
    return undefined; // no proxy: the per-call launch says why
  }
  const args = bwrapArgs(
    sandbox,
    cwd,
    hiddenForCommand(env, settings?.configPath),
    undefined,
    gate,
  );
  if (filter?.ok) insertBeforeChdir(args, filter.binds ?? []);
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
      takeIdle(key) ??
      (await startWarm(key, sandbox.bwrap, args, tools, sandbox.network === true, cwd, {
        filter: program,
        keeper: gate?.keeper,
      }));
  } catch {
    return undefined; // could not start: the per-call launch shows bwrap's own error
  }
  const childEnv = buildToolEnv(settings?.env ?? EMPTY_SHELL_ENV, env);
  childEnv.TMPDIR = "/tmp";
  Object.assign(childEnv, gate?.env);
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
    args: [...warm.enter, ...warm.prefix, "bash", "-c", command],
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
      [...warm.enter, ...warm.prefix, "bash", "-c", STANDBY_SCRIPT],
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
    const now = scratchListing(`/proc/${warm.pid}/root`, warm.scratchDirs, limit);
    if (now !== warm.scratch) return true;
    return nsOf(warm.pid) !== warm.mntNs;
  } catch {
    return true; // the keeper is gone, or unreadable: never reuse it
  }
}

/**
 * What the sandbox's own writable places hold (its private /tmp and /dev, walked without
 * crossing into the working directory or another mount): the same after a clean call as at start.
 */
function scratchListing(root: string, dirs: string[], limit = Infinity): string {
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
  for (const top of dirs) {
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
  options: { filter?: string; keeper?: string[] } = {},
): Promise<Warm> {
  const { filter, keeper = KEEPER } = options;
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
    ...keeper,
  ];
  // Its writable scratch: /tmp, /dev, and each tmpfs that hides a directory of warren's.
  const scratchDirs = ["tmp", "dev"];
  args.forEach((arg, at) => {
    const dir = args[at + 1];
    if (arg === "--tmpfs" && dir && dir !== "/tmp") scratchDirs.push(dir.slice(1));
  });
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
        scratch = scratchListing(`/proc/${pid}/root`, scratchDirs);
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
        "--ipc",
        ...(network ? [] : ["--net"]),
        "--root",
        "--wd",
      ];
      // With the filter, setpriv leaves apply-seccomp the one capability it needs (FILTER_CAP).
      const prefix = filter
        ? [tools.setpriv, ...SETPRIV_FILTER_ARGS, filter]
        : [tools.setpriv, ...SETPRIV_ARGS];
      const warm: Warm = {
        key,
        bwrap: child,
        pid,
        mntNs,
        enter,
        scratch,
        dead: false,
        cwd,
        tools,
        prefix,
        scratchDirs,
      };
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
