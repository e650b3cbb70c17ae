// With the network off (`sandbox_network: false`) a command must reach nothing: `--unshare-net`
// takes TCP and abstract sockets away, but a Unix socket on the filesystem (PostgreSQL's in
// /var/run/postgresql, MySQL's, Docker's) is a path, reachable through the read-only root. So the
// command runs through `apply-seccomp` of @anthropic-ai/sandbox-runtime (its static vendored
// binary): a seccomp filter that refuses socket(AF_UNIX) and new namespaces, then execs the
// command. socketpair() still works, so pipes between a command's own processes do.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const PACKAGE = "@anthropic-ai/sandbox-runtime/package.json";
const ARCHES: Record<string, string> = { x64: "x64", arm64: "arm64" };

export type Seccomp = { ok: true; program: string } | { ok: false; reason: string };

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

/**
 * The filter's program for a sandbox whose writable places are `writable` (real paths): refused
 * when it lies inside one of them, where a command could have replaced it for the next call.
 */
export function trustedSeccomp(writable: string[]): Seccomp {
  const seccomp = seccompProgram();
  if (!seccomp.ok) return seccomp;
  const inside = writable.find(
    (dir) => seccomp.program === dir || seccomp.program.startsWith(dir + path.sep),
  );
  if (inside === undefined) return seccomp;
  return { ok: false, reason: `${seccomp.program} lies in ${inside}, writable inside the sandbox` };
}

/** For tests: look again (a test may point PATH or the package elsewhere). */
export function forgetSeccomp(): void {
  found = undefined;
}
