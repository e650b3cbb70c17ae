// With the network off (`sandbox_network: false`) a command must reach nothing: `--unshare-net`
// takes TCP and abstract sockets away, but a Unix socket on the filesystem (PostgreSQL's in
// /var/run/postgresql, MySQL's, Docker's) is a path, reachable through the read-only root. So the
// command runs through `apply-seccomp` of @anthropic-ai/sandbox-runtime (its static vendored
// binary): a seccomp filter that refuses socket(AF_UNIX) and new namespaces, then execs the
// command. socketpair() still works, so pipes between a command's own processes do.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { warrenHome } from "../paths.js";

const PACKAGE = "@anthropic-ai/sandbox-runtime/package.json";
const ARCHES: Record<string, string> = { x64: "x64", arm64: "arm64" };

export type Seccomp =
  { ok: true; program: string; binds?: string[] } | { ok: false; reason: string };

let found: Seccomp | undefined;

/**
 * The apply-seccomp binary for this machine, found once: resolved from this module's own place
 * (so from src/, dist/ and the bundle in dist/bundle alike), or why there is none.
 */
export function seccompProgram(): Seccomp {
  found ??= locate();
  return found;
}

function locate(): Seccomp {
  // WARREN_APPLY_SECCOMP: another build of the binary (tests: a missing one).
  const own = process.env.WARREN_APPLY_SECCOMP;
  if (own !== undefined) return checked(own);
  const arch = ARCHES[process.arch];
  if (!arch) return { ok: false, reason: `no seccomp filter for this machine (${process.arch})` };
  let dir: string;
  try {
    dir = path.dirname(createRequire(import.meta.url).resolve(PACKAGE));
  } catch {
    return { ok: false, reason: "@anthropic-ai/sandbox-runtime is not installed" };
  }
  return checked(path.join(dir, "vendor", "seccomp", arch, "apply-seccomp"));
}

function checked(program: string): Seccomp {
  try {
    fs.accessSync(program, fs.constants.X_OK);
    return { ok: true, program: fs.realpathSync(program) };
  } catch {
    return { ok: false, reason: `${program} is missing or not executable` };
  }
}

/** Where the filter's program is inside every sandbox: bound read-only into its private /tmp. */
export const FILTER_INSIDE = "/tmp/.warren-apply-seccomp";

let copied: { from: string; to: string } | undefined;

/**
 * The filter's program for a sandbox whose writable places are `writable` (real paths), bound
 * read-only at FILTER_INSIDE so no command can replace it for the next call. When the installed
 * binary lies inside a writable place (warren run on its own checkout), a copy in warren's home
 * (0700, hidden from commands) is bound instead, made once per process.
 */
export function trustedSeccomp(writable: string[]): Seccomp {
  const seccomp = seccompProgram();
  if (!seccomp.ok) return seccomp;
  const inside = writable.some(
    (dir) => seccomp.program === dir || seccomp.program.startsWith(dir + path.sep),
  );
  let host = seccomp.program;
  if (inside) {
    try {
      host = privateCopy(seccomp.program);
    } catch (err) {
      return {
        ok: false,
        reason: `${seccomp.program} lies where a command can write, and no private copy could be made (${(err as Error).message})`,
      };
    }
  }
  return { ok: true, program: FILTER_INSIDE, binds: ["--ro-bind", host, FILTER_INSIDE] };
}

function privateCopy(program: string): string {
  if (copied?.from === program && fs.existsSync(copied.to)) return copied.to;
  const dir = path.join(warrenHome(process.env), "bin");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const to = path.join(dir, "apply-seccomp");
  const temp = `${to}.${process.pid}`;
  fs.copyFileSync(program, temp);
  fs.chmodSync(temp, 0o500);
  fs.renameSync(temp, to);
  copied = { from: program, to };
  return to;
}

/** For tests: look again (a test may point PATH or the package elsewhere). */
export function forgetSeccomp(): void {
  found = undefined;
  copied = undefined;
}
