// The embedded PostgreSQL under $WARREN_HOME: initialised once, started on demand with pg_ctl and
// left running after this process exits, so every warren process on the machine shares one server.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import {
  acquireLock,
  binaries,
  chownTo,
  ensureSearchable,
  findFreePort,
  isPortFree,
  postgresUser,
  run,
  sleep,
  type RunAs,
} from "./embedded-host.js";
import { firstLine } from "../text/format.js";

export interface EmbeddedStatus {
  initialised: boolean;
  running: boolean;
  port: number | undefined;
  dataDir: string;
  logPath: string;
  url: string | undefined;
}

export interface EmbeddedOptions {
  /** Where one-line notices (first set-up, a permission changed, a port moved) go; stderr by default. */
  notice?: (line: string) => void;
}

/** Stored in $WARREN_HOME/postgres.json (mode 0600). */
interface EmbeddedConfig {
  port: number;
  user: string;
  password: string;
  database: string;
}

interface Paths {
  home: string;
  dataDir: string;
  logPath: string;
  configPath: string;
  lockPath: string;
}

const FIRST_PORT = 54329;

function pathsOf(home: string): Paths {
  return {
    home,
    dataDir: path.join(home, "pgdata"),
    logPath: path.join(home, "postgres.log"),
    configPath: path.join(home, "postgres.json"),
    lockPath: path.join(home, "embedded.lock"),
  };
}

function urlOf(config: EmbeddedConfig, database = config.database): string {
  return `postgres://${config.user}:${config.password}@127.0.0.1:${config.port}/${database}`;
}

const defaultNotice = (line: string): void => void process.stderr.write(`warren: ${line}\n`);

/** Starts the embedded server if it does not answer (initialising it first if needed); returns its URL. */
export async function ensureEmbedded(home: string, options: EmbeddedOptions = {}): Promise<string> {
  const notice = options.notice ?? defaultNotice;
  const paths = pathsOf(path.resolve(home));
  const known = await readConfig(paths);
  if (known && (await isInitialised(paths)) && (await ping(known)) === "ok") return urlOf(known);

  // Its files are the person's alone (the password in postgres.json): 0700 here, 0600 below. Run
  // as root, ensureSearchable gives the postgres user search permission only.
  await fs.mkdir(paths.home, { recursive: true, mode: 0o700 });
  const release = await acquireLock(paths.lockPath);
  try {
    const runAs = await postgresUser(notice);
    if (runAs) await ensureSearchable([paths.dataDir, (await binaries()).pg_ctl], runAs, notice);
    const fresh = !(await isInitialised(paths));
    // initdb and the first start take seconds: say why nothing else shows meanwhile.
    if (fresh) notice(`first start: setting up the embedded PostgreSQL in ${paths.dataDir}…`);
    const config = fresh ? await initialise(paths, runAs) : await readConfig(paths);
    if (!config) {
      throw new Error(
        `embedded database at ${paths.dataDir} has no ${paths.configPath}; remove ${paths.home} to start afresh`,
      );
    }
    const state = await ping(config);
    if (state === "no-database") await createDatabase(config);
    if (state !== "ok" && state !== "no-database") await start(paths, config, runAs, notice);
    return urlOf(config);
  } finally {
    await release();
  }
}

export async function embeddedStatus(home: string): Promise<EmbeddedStatus> {
  const paths = pathsOf(path.resolve(home));
  const config = await readConfig(paths);
  const initialised = config !== undefined && (await isInitialised(paths));
  return {
    initialised,
    running: initialised && config !== undefined && (await ping(config)) !== "down",
    port: config?.port,
    dataDir: paths.dataDir,
    logPath: paths.logPath,
    url: config ? urlOf(config) : undefined,
  };
}

/** Stops the server with `pg_ctl stop -m fast`; returns whether one was running. */
export async function stopEmbedded(home: string): Promise<boolean> {
  const paths = pathsOf(path.resolve(home));
  if (!(await isInitialised(paths))) return false;
  const runAs = await postgresUser(defaultNotice);
  const { pg_ctl } = await binaries();
  // Exit status 3: no server running.
  if ((await run(pg_ctl, ["status", "-D", paths.dataDir], runAs, paths.home)).code !== 0)
    return false;
  const stop = await run(
    pg_ctl,
    ["stop", "-w", "-m", "fast", "-D", paths.dataDir],
    runAs,
    paths.home,
  );
  if (stop.code !== 0)
    throw new Error(`could not stop the embedded database: ${firstLine(stop.stderr)}`);
  return true;
}

async function initialise(paths: Paths, runAs: RunAs | undefined): Promise<EmbeddedConfig> {
  const { initdb } = await binaries();
  const config: EmbeddedConfig = {
    port: await findFreePort(FIRST_PORT),
    user: "warren",
    password: randomBytes(18).toString("hex"),
    database: "warren",
  };
  // initdb into a scratch directory renamed into place, so an interrupted init leaves no half
  // cluster; scratch directories found here are leftovers of such inits (we hold the lock).
  const scratch = `${paths.dataDir}.init-${process.pid}`;
  const pwFile = path.join(paths.home, `.pwfile-${process.pid}`);
  for (const entry of await fs.readdir(paths.home)) {
    if (entry.startsWith("pgdata.init-") || entry.startsWith(".pwfile-")) {
      await fs.rm(path.join(paths.home, entry), { recursive: true, force: true });
    }
  }
  await fs.mkdir(scratch, { mode: 0o700 });
  await fs.writeFile(pwFile, `${config.password}\n`, { mode: 0o600 });
  try {
    await chownTo([scratch, pwFile], runAs);
    const args = [`--pgdata=${scratch}`, "--auth=scram-sha-256", `--username=${config.user}`];
    args.push(`--pwfile=${pwFile}`, "--encoding=UTF8", "--locale=C");
    const result = await run(initdb, args, runAs, paths.home);
    if (result.code !== 0)
      throw new Error(`initdb failed: ${lastLine(result.stderr || result.stdout)}`);
  } finally {
    await fs.rm(pwFile, { force: true });
  }
  const configTmp = `${paths.configPath}.${process.pid}`;
  await fs.writeFile(configTmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await fs.rename(scratch, paths.dataDir);
  await fs.rename(configTmp, paths.configPath);
  return config;
}

async function start(
  paths: Paths,
  config: EmbeddedConfig,
  runAs: RunAs | undefined,
  notice: (line: string) => void,
): Promise<void> {
  const { pg_ctl } = await binaries();
  // The unix socket path must fit in sockaddr_un (~107 bytes) and survive pg_ctl's shell quoting.
  let socketDir = path.join(paths.home, "run");
  if (socketDir.length > 80 || socketDir.includes("'")) socketDir = os.tmpdir();
  else await fs.mkdir(socketDir, { recursive: true, mode: 0o700 });
  await fs.appendFile(paths.logPath, "", { mode: 0o600 });
  await chownTo([paths.logPath, ...(socketDir === os.tmpdir() ? [] : [socketDir])], runAs);

  if ((await run(pg_ctl, ["status", "-D", paths.dataDir], runAs, paths.home)).code === 0) {
    // A server is up for this data directory but did not answer yet: it is still starting.
    return waitUntilAnswering(paths, config);
  }
  for (let attempt = 0; ; attempt++) {
    if (!(await isPortFree(config.port))) {
      const port = await findFreePort(config.port + 1);
      notice(`port ${config.port} is taken; the embedded database now uses port ${port}`);
      config.port = port;
      await writeConfig(paths, config);
    }
    const logStart = (await fs.stat(paths.logPath)).size;
    const opts = `-p ${config.port} -c listen_addresses=127.0.0.1 -k '${socketDir}'`;
    const args = ["start", "-w", "-t", "60", "-D", paths.dataDir, "-l", paths.logPath, "-o", opts];
    const result = await run(pg_ctl, args, runAs, paths.home);
    if (result.code === 0) break;
    const log = await readFrom(paths.logPath, logStart);
    if (/another server might be running/.test(result.stderr))
      return waitUntilAnswering(paths, config);
    // Another process (or another warren home) grabbed the port between our check and the bind.
    if (/could not bind|already in use/i.test(log) && attempt < 3) continue;
    const fatal = /\b(FATAL|PANIC|ERROR):\s+(.*)$/.exec(
      lastMatching(log, /\b(FATAL|PANIC|ERROR):/) ?? "",
    );
    const reason = fatal ? `${fatal[1]}: ${fatal[2]}` : lastLine(result.stderr || result.stdout);
    throw new Error(`embedded database failed to start (log: ${paths.logPath}): ${reason}`);
  }
  await createDatabase(config);
}

async function waitUntilAnswering(paths: Paths, config: EmbeddedConfig): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await ping(config);
    if (state === "ok") return;
    if (state === "no-database") return createDatabase(config);
    if (Date.now() > deadline) {
      throw new Error(
        `embedded database is running but does not answer on port ${config.port} (log: ${paths.logPath})`,
      );
    }
    await sleep(250);
  }
}

type PingResult = "ok" | "no-database" | "down";

async function ping(config: EmbeddedConfig): Promise<PingResult> {
  const client = new pg.Client({ connectionString: urlOf(config), connectionTimeoutMillis: 3_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    return "ok";
  } catch (error) {
    // 3D000 invalid_catalog_name: the server is ours but the warren database is not created yet.
    return (error as { code?: string }).code === "3D000" ? "no-database" : "down";
  } finally {
    await client.end().catch(() => {});
  }
}

async function createDatabase(config: EmbeddedConfig): Promise<void> {
  const client = new pg.Client({ connectionString: urlOf(config, "postgres") });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      config.database,
    ]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${config.database}"`);
  } catch (error) {
    if ((error as { code?: string }).code !== "42P04") throw error; // duplicate_database: a racer won.
  } finally {
    await client.end();
  }
}

async function isInitialised(paths: Paths): Promise<boolean> {
  return exists(path.join(paths.dataDir, "PG_VERSION"));
}

async function readConfig(paths: Paths): Promise<EmbeddedConfig | undefined> {
  try {
    return JSON.parse(await fs.readFile(paths.configPath, "utf8")) as EmbeddedConfig;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read ${paths.configPath}: ${(error as Error).message}`);
  }
}

async function writeConfig(paths: Paths, config: EmbeddedConfig): Promise<void> {
  const tmp = `${paths.configPath}.${process.pid}`;
  await fs.writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await fs.rename(tmp, paths.configPath);
}

async function readFrom(file: string, offset: number): Promise<string> {
  const bytes = await fs.readFile(file).catch(() => Buffer.alloc(0));
  return bytes.subarray(offset).toString("utf8");
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}

function lastMatching(text: string, pattern: RegExp): string | undefined {
  return text
    .split("\n")
    .filter((line) => pattern.test(line))
    .at(-1)
    ?.trim();
}
