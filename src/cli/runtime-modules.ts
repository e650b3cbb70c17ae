// The agent runtime's entry points as the command line expects them, loaded on demand so the
// command line builds and runs (everything but -p and worker) before the runtime exists.
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../config/config.js";
import type { Db } from "../db/client.js";
import { CliError } from "./command.js";

export interface PromptOptions {
  db: Db;
  url: string;
  config: Config;
  prompt: string;
  /** Undefined: no time limit. */
  timeoutMs: number | undefined;
  /** Aborted on Ctrl+C: the run stops early. */
  signal?: AbortSignal;
  onWarning?: (message: string) => void;
}

export interface PromptResult {
  treeId: string;
  agentId: string;
  text: string;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  error?: string;
  timedOut?: boolean;
}

export interface HeadlessModule {
  runPrompt(options: PromptOptions): Promise<PromptResult>;
}

export interface RuntimeOptions {
  url: string;
  config: Config;
  threads: number;
  concurrency: number;
  onWarning?: (message: string) => void;
}

export interface PoolModule {
  startRuntime(options: RuntimeOptions): Promise<{ stop(): Promise<void> }>;
}

export function loadHeadless(): Promise<HeadlessModule> {
  return load<HeadlessModule>("../runtime/headless.js", "runPrompt", "headless mode (-p)");
}

export function loadPool(): Promise<PoolModule> {
  return load<PoolModule>("../runtime/pool.js", "startRuntime", "warren worker");
}

async function load<T>(specifier: string, exportName: string, what: string): Promise<T> {
  // A variable specifier keeps tsc from requiring the module at build time; it still resolves
  // relative to this file.
  const file = fileURLToPath(new URL(specifier, import.meta.url));
  let module: Record<string, unknown>;
  try {
    module = (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    const { code, message = "" } = error as { code?: string; message?: string };
    // Only the module itself missing means "not built"; a missing import inside it is a real bug.
    if (code === "ERR_MODULE_NOT_FOUND" && message.includes(`'${file}'`)) {
      throw new CliError(
        `${what} is not available: the agent runtime (${path.basename(file)}) is not built in this version`,
      );
    }
    throw error;
  }
  if (typeof module[exportName] !== "function") {
    throw new CliError(`${what} is not available: ${path.basename(file)} has no ${exportName}()`);
  }
  return module as T;
}
