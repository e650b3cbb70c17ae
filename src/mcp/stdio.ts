// The stdio transport to an MCP server started the one way warren starts commands
// (sandbox/run.ts): in the sandbox by default, with its own writable state directory under
// warren's home, the environment allowlist plus the server's configured env, no view of warren's
// process; unconfined only when the person's config marks it `"sandbox": false`.
import path from "node:path";
import { PassThrough } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { warrenHome } from "../paths.js";
import { realPath } from "../sandbox/launch.js";
import { runConfined, type Confined } from "../sandbox/run.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "../sandbox/settings.js";
import { EMPTY_SHELL_ENV } from "../sandbox/env.js";
import type { StdioServerConfig } from "./config.js";
import { serverExtraEnv } from "./env.js";

/** After stdin closes, how long a server may take to exit before its group is killed. */
const CLOSE_GRACE_MS = 2_000;

/** A server's own state directory: `<warren's home>/mcp/<name>`, writable in its sandbox. */
export function serverStateDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(warrenHome(env), "mcp", name);
}

/**
 * How `server` runs: the config's sandbox (or the default) with its state directory; unconfined
 * when the person's config says `"sandbox": false`, never when a project file does (`allow` set).
 */
export function serverConfinement(name: string, server: StdioServerConfig): ShellSettings {
  const base = server.confine ?? { sandbox: DEFAULT_SANDBOX, env: EMPTY_SHELL_ENV };
  if (base.sandbox.mode === "off" || (server.sandbox === false && !server.allow)) {
    return { ...base, sandbox: { ...base.sandbox, mode: "off" } };
  }
  return { ...base, env: EMPTY_SHELL_ENV, stateDir: serverStateDir(name) };
}

export class ConfinedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The server's stderr, readable before start (nothing it writes early is lost). */
  readonly stderr = new PassThrough();
  private readonly buffer = new ReadBuffer();
  private confined: Confined | undefined;
  private closed = false;

  constructor(
    private readonly name: string,
    private readonly server: StdioServerConfig,
  ) {}

  async start(): Promise<void> {
    const server = this.server;
    const settings = serverConfinement(this.name, server);
    const started = await runConfined({
      settings,
      // The person's own setting: a link in it is theirs, followed here (a sandbox refuses a
      // working directory reached through a link, which an agent's could only be by its doing).
      cwd: realPath(server.cwd ?? process.cwd()),
      run: { argv: [server.command, ...server.args] },
      env: serverExtraEnv(server.env, settings.stateDir),
      stdin: true,
    });
    if (!started.ok) throw new Error(started.message);
    const confined = started.confined;
    this.confined = confined;
    const { child } = confined;
    child.stdin!.on("error", (err) => this.onerror?.(err));
    child.stdout!.on("data", (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
        this.drain();
      } catch (err) {
        this.onerror?.(err as Error);
        void this.close();
      }
    });
    child.stdout!.on("error", (err) => this.onerror?.(err));
    child.stderr!.pipe(this.stderr);
    child.on("exit", () => confined.exited());
    child.on("close", () => {
      confined.finish(true);
      this.confined = undefined;
      if (!this.closed) {
        this.closed = true;
        this.onclose?.();
      }
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
    });
    confined.begin();
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.confined?.child.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    const confined = this.confined;
    this.buffer.clear();
    if (!confined) return;
    const { child } = confined;
    const gone = new Promise<void>((resolve) => child.once("close", () => resolve()));
    child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), CLOSE_GRACE_MS);
    });
    if ((await Promise.race([gone, late])) === "late") {
      confined.kill();
      await gone;
    }
    clearTimeout(timer);
  }
}
