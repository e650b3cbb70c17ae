// Runs the real `bin/warren` as a child process against a test database and a fake model.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/warren");

export interface WarrenRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface WarrenEnv {
  databaseUrl: string;
  modelUrl?: string;
  extra?: Record<string, string>;
}

/** An environment with nothing of the developer's own: temp home, config and cwd. */
export function warrenEnv(options: WarrenEnv): NodeJS.ProcessEnv {
  const home = mkdtempSync(path.join(os.tmpdir(), "warren-home-"));
  return {
    PATH: process.env.PATH,
    HOME: home,
    WARREN_HOME: path.join(home, "data"),
    XDG_CONFIG_HOME: path.join(home, "config"),
    DATABASE_URL: options.databaseUrl,
    NO_COLOR: "1",
    ...(options.modelUrl
      ? { OPENAI_BASE_URL: options.modelUrl, OPENAI_API_KEY: "test", WARREN_MODEL: "fake-model" }
      : {}),
    WARREN_WORKER_THREADS: "1",
    // Tools the default policy asks about run unasked in tests; approval tests set their own mode.
    WARREN_APPROVE: "all",
    ...options.extra,
  };
}

export function startWarren(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): { child: ChildProcess; done: Promise<WarrenRun> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env,
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<WarrenRun>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runWarren(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<WarrenRun> {
  return startWarren(args, env, cwd).done;
}
