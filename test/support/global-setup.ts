// Vitest global setup: finds one real Postgres for the run (TEST_DATABASE_URL, else Docker, else
// embedded) and builds a migrated template database that each test file clones (see ./db.ts).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { embeddedStatus, ensureEmbedded, stopEmbedded } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser-ish URL on the test server, for CREATE/DROP DATABASE. */
    testDatabaseAdminUrl: string;
    /** The migrated template database that test databases are cloned from. */
    testDatabaseTemplate: string;
  }
}

interface Server {
  adminUrl: string;
  label: string;
  stop(): Promise<void>;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // warren's home for the run (checkpoint vaults, the trust store), unless one was given: the
  // test files' processes inherit it, so nothing is left in the person's real home.
  const home = process.env.WARREN_HOME
    ? undefined
    : await fs.mkdtemp(path.join(os.tmpdir(), "warren-test-home-"));
  if (home) process.env.WARREN_HOME = home;
  const removeHome = () =>
    home ? fs.rm(home, { recursive: true, force: true }) : Promise.resolve();
  const server = await startServer().catch(async (error: unknown) => {
    await removeHome();
    throw error;
  });
  const template = `warren_tpl_${randomBytes(4).toString("hex")}`;
  try {
    await adminQuery(server.adminUrl, `CREATE DATABASE "${template}"`);
    await migrate(withDatabase(server.adminUrl, template));
  } catch (error) {
    await server.stop();
    await removeHome();
    throw error;
  }
  project.provide("testDatabaseAdminUrl", server.adminUrl);
  project.provide("testDatabaseTemplate", template);
  process.stderr.write(`test database: ${server.label}, template ${template}\n`);

  return async () => {
    try {
      await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    } finally {
      await server.stop();
      await removeHome();
    }
  };
}

async function startServer(): Promise<Server> {
  const fromEnv = process.env.TEST_DATABASE_URL;
  if (fromEnv) return { adminUrl: fromEnv, label: "TEST_DATABASE_URL", stop: async () => {} };
  const docker = await startDockerServer();
  if (docker) return docker;
  return startEmbeddedServer();
}

/** A postgres:16-alpine container, or undefined (quickly) when no container engine answers. */
async function startDockerServer(): Promise<Server | undefined> {
  if (!(await dockerEngineAnswers())) return undefined;
  const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
  try {
    const container = await new PostgreSqlContainer("postgres:16-alpine").start();
    return {
      adminUrl: container.getConnectionUri(),
      label: "docker postgres:16-alpine",
      stop: () => container.stop().then(() => {}),
    };
  } catch (error) {
    process.stderr.write(
      `docker answered but the postgres container failed (${String(error)}); using embedded\n`,
    );
    return undefined;
  }
}

async function dockerEngineAnswers(): Promise<boolean> {
  const sockets = ["/var/run/docker.sock", path.join(os.homedir(), ".docker/run/docker.sock")];
  if (process.env.XDG_RUNTIME_DIR)
    sockets.push(path.join(process.env.XDG_RUNTIME_DIR, "docker.sock"));
  if (!process.env.DOCKER_HOST && !sockets.some((socket) => existsSync(socket))) return false;
  return new Promise((resolve) => {
    execFile("docker", ["info", "--format", "{{.ServerVersion}}"], { timeout: 5_000 }, (error) =>
      resolve(!error),
    );
  });
}

/** Embedded Postgres in a fresh temporary WARREN_HOME, stopped and removed at teardown. */
async function startEmbeddedServer(): Promise<Server> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "warren-test-pg-"));
  // mkdtemp makes 0700; when root runs the server as `postgres`, that user must traverse it.
  await fs.chmod(home, 0o755);
  const remove = async () => {
    await stopEmbedded(home).catch(() => {});
    await fs.rm(home, { recursive: true, force: true });
  };
  try {
    const url = await ensureEmbedded(home);
    const { port } = await embeddedStatus(home);
    return {
      adminUrl: withDatabase(url, "postgres"),
      label: `embedded on port ${port} in ${home}`,
      stop: remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
