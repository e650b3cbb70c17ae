// The bash tool: runs a command in its own process group in the agent's cwd, returns its
// interleaved output (capped) and kills the whole group on timeout or abort.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { checkArgs, objectSchema } from "./paths.js";
import { errorMessage, fail, ok, type Tool, type ToolOutcome } from "./tool.js";

const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 600;
/** Kept from each end of long output; with the note between them the total stays ≤ 30,000. */
const HEAD_CHARS = 14_900;
const TAIL_CHARS = 14_900;
/**
 * After bash exits, how long to wait for its pipes to close. A background process it left
 * behind may hold them open indefinitely; we return without its later output.
 */
const EXIT_GRACE_MS = 250;

const parameters = objectSchema(
  {
    command: { type: "string", minLength: 1, description: "The command, run with `bash -c`." },
    timeout: {
      type: "number",
      minimum: 1,
      maximum: MAX_TIMEOUT_S,
      description: `Seconds before the command is killed (default ${DEFAULT_TIMEOUT_S}, max ${MAX_TIMEOUT_S}).`,
    },
  },
  ["command"],
);

interface BashArgs {
  command: string;
  timeout?: number;
}

/** Keeps the first and last characters of a stream of text, counting what falls between. */
class CappedOutput {
  private head = "";
  private tail = "";
  private total = 0;

  push(text: string): void {
    this.total += text.length;
    const room = HEAD_CHARS - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (text === "") return;
    this.tail += text;
    // Trim only past twice the budget, so short output is never trimmed and trimming is amortised.
    if (this.tail.length > 2 * TAIL_CHARS) this.tail = this.tail.slice(-TAIL_CHARS);
  }

  result(): { output: string; truncated: boolean } {
    if (this.total <= HEAD_CHARS + TAIL_CHARS) {
      return { output: this.head + this.tail, truncated: false };
    }
    const tail = this.tail.slice(-TAIL_CHARS);
    const cut = this.total - this.head.length - tail.length;
    return { output: `${this.head}\n[… ${cut} characters cut …]\n${tail}`, truncated: true };
  }
}

function exitCode(code: number | null, signal: NodeJS.Signals | null): number | null {
  if (code !== null) return code;
  return signal === null ? null : 128 + constants.signals[signal];
}

function runBash(command: string, timeoutS: number, cwd: string, signal: AbortSignal) {
  return new Promise<ToolOutcome>((resolve) => {
    const child = spawn("bash", ["-c", command], {
      cwd,
      detached: true, // its own process group, so one kill reaches everything it started
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = new CappedOutput();
    let timedOut = false;
    let interrupted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let grace: NodeJS.Timeout | undefined;
    let settled = false;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = () => {
      interrupted = true;
      killGroup();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutS * 1000);
    signal.addEventListener("abort", onAbort, { once: true });

    const finish = (outcome: () => ToolOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      signal.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(outcome());
    };
    const result = () => {
      const { output: text, truncated } = output.result();
      return ok({
        exit_code: exitCode(exit.code, exit.signal),
        output: text,
        ...(timedOut && { timed_out: true }),
        ...(interrupted && { interrupted: true }),
        ...(truncated && { truncated: true }),
      });
    };

    child.stdout.setEncoding("utf8").on("data", (text: string) => output.push(text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => output.push(text));
    child.on("error", (err) =>
      finish(() => fail("INTERNAL", `could not run bash: ${errorMessage(err)}`)),
    );
    child.on("exit", (code, sig) => {
      exit = { code, signal: sig };
      grace = setTimeout(() => finish(result), EXIT_GRACE_MS);
    });
    child.on("close", () => finish(result));
  });
}

export const bashTool: Tool = {
  name: "bash",
  description:
    "Run a shell command with `bash -c` in your working directory and get its exit code and " +
    "combined stdout/stderr (long output keeps only its start and end). stdin is closed; the " +
    "command and everything it started are killed when the timeout passes.",
  parameters,
  async run(args, ctx) {
    const checked = checkArgs<BashArgs>(parameters, args);
    if (!checked.ok) return checked;
    const { command, timeout = DEFAULT_TIMEOUT_S } = checked.value;
    if (ctx.signal.aborted) return ok({ exit_code: null, output: "", interrupted: true });
    try {
      return await runBash(command, timeout, ctx.cwd, ctx.signal);
    } catch (err) {
      return fail("INTERNAL", `could not run bash: ${errorMessage(err)}`);
    }
  },
};
