// A real PgBouncer (Debian's package) in transaction mode in front of the test Postgres, on a free
// 127.0.0.1 port: every database of the server under its own name (the per-file clones included).
// PgBouncer refuses to run as root: as root it is started with `-u` as the postgres user (else
// nobody), its files readable by that user.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface Pgbouncer {
  port: number;
  /** `url` (a database on the server behind it) with the pooler's host and port instead. */
  urlFor(url: string): string;
  stop(): Promise<void>;
  /** Stops it with SIGKILL and starts it again on the same port (clients' connections drop). */
  restart(): Promise<void>;
}

/** The pgbouncer binary, or undefined when it is not installed. */
export function pgbouncerPath(): string | undefined {
  for (const candidate of ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]) {
    if (spawnSync(candidate, ["--version"]).status === 0) return candidate;
  }
  const found = spawnSync("sh", ["-c", "command -v pgbouncer"], { encoding: "utf8" });
  const where = found.stdout.trim();
  return found.status === 0 && where ? where : undefined;
}

export const PGBOUNCER_MISSING =
  "pgbouncer is not installed (apt-get install -y pgbouncer): the pooler tests are skipped";

export interface PgbouncerOptions {
  /** Server connections per database and user (default 4: consecutive statements may land on different ones). */
  poolSize?: number;
}

/** Starts pgbouncer in front of the server `serverUrl` points at (any database on it). */
export async function startPgbouncer(
  serverUrl: string,
  options: PgbouncerOptions = {},
): Promise<Pgbouncer> {
  const binary = pgbouncerPath();
  if (!binary) throw new Error(PGBOUNCER_MISSING);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || "postgres");
  const password = decodeURIComponent(server.password);
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-pgbouncer-"));
  const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;
  const target = [
    `host=${server.hostname || "127.0.0.1"}`,
    `port=${server.port || "5432"}`,
    `user=${quote(user)}`,
    ...(password ? [`password=${quote(password)}`] : []),
  ].join(" ");
  writeFileSync(path.join(dir, "users.txt"), `"${user.replace(/"/g, '""')}" ""\n`);
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = ${target}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 4}`,
      "max_client_conn = 1000",
      "server_login_retry = 1",
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    chmodSync(path.join(dir, "users.txt"), 0o644);
    chmodSync(path.join(dir, "pgbouncer.ini"), 0o644);
  }
  const runAs = asRoot ? ["-u", userExists("postgres") ? "postgres" : "nobody"] : [];
  let child: ChildProcess | undefined;
  let output = "";

  const start = async () => {
    output = "";
    const started = spawn(binary, [...runAs, path.join(dir, "pgbouncer.ini")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = started;
    started.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    started.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 10_000;
    while (!(await accepts(port))) {
      if (started.exitCode !== null || Date.now() > deadline) {
        started.kill("SIGKILL");
        throw new Error(`pgbouncer did not start (exit ${started.exitCode}): ${output.trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stopChild = async (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill(signal);
    await exited;
  };

  await start();
  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    async stop() {
      await stopChild("SIGINT");
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stopChild("SIGKILL");
      await start();
    },
  };
}

function userExists(name: string): boolean {
  return spawnSync("id", ["-u", name]).status === 0;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
