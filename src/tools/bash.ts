// The bash tool: runs a command in its own process group in the agent's cwd, returns its
// interleaved output (capped) and kills the whole group on timeout or abort — or when warren
// itself dies (kill -9 included): a watchdog in the group holds a lifeline pipe to this process.
import { constants } from "node:os";
import { runConfined, type Confined } from "../sandbox/run.js";
import { nonEmptyString, objectSchema, checkedTool } from "./args.js";
import { errorMessage, fail, ok, type ToolOutcome, type BaseToolContext } from "./tool.js";

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
    command: nonEmptyString("The command, run with `bash -c`."),
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

/** Runs the started command to its end: its output (capped), exit code, timeout or interrupt. */
function runBash(confined: Confined) {
  const { child, state } = confined;
  return new Promise<ToolOutcome>((resolve) => {
    // With a fourth pipe the typings no longer know stdout and stderr are pipes; they are.
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    const output = new CappedOutput();
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let grace: NodeJS.Timeout | undefined;
    let settled = false;
    let clean = false;

    const finish = (outcome: () => ToolOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(grace);
      stdout.destroy();
      stderr.destroy();
      confined.finish(clean);
      resolve(outcome());
    };
    const result = () => {
      const { output: text, truncated } = output.result();
      return ok({
        exit_code: exitCode(exit.code, exit.signal),
        output: text,
        ...(state.timedOut && { timed_out: true }),
        ...(state.aborted && { interrupted: true }),
        ...(truncated && { truncated: true }),
      });
    };

    stdout.setEncoding("utf8").on("data", (text: string) => output.push(text));
    stderr.setEncoding("utf8").on("data", (text: string) => output.push(text));
    child.on("error", (err) =>
      finish(() => fail("INTERNAL", `could not run bash: ${errorMessage(err)}`)),
    );
    child.on("exit", (code, sig) => {
      exit = { code, signal: sig };
      confined.exited();
      grace = setTimeout(() => finish(result), EXIT_GRACE_MS);
    });
    child.on("close", () => {
      clean = true;
      finish(result);
    });
    confined.begin();
  });
}

export const bashTool = checkedTool<BashArgs, BaseToolContext>({
  name: "bash",
  outside: true,
  description:
    "Run a shell command with `bash -c` in your working directory and get its exit code and " +
    "combined stdout/stderr (long output keeps only its start and end). stdin is closed; the " +
    "command and everything it started are killed when the timeout passes.",
  parameters,
  async run(args, ctx) {
    const { command, timeout = DEFAULT_TIMEOUT_S } = args;
    if (ctx.signal.aborted) return ok({ exit_code: null, output: "", interrupted: true });
    try {
      // In a warm sandbox of this agent's where it can, else in bubblewrap per call where it
      // works; refused when the config requires the sandbox and it does not work (sandbox/run.ts).
      const owner = "agent" in ctx ? String((ctx.agent as { id?: unknown }).id) : "";
      const started = await runConfined({
        settings: ctx.shell,
        cwd: ctx.cwd,
        run: { command },
        warmOwner: owner,
        timeoutMs: timeout * 1000,
        signal: ctx.signal,
      });
      if (!started.ok) {
        if (started.aborted) return ok({ exit_code: null, output: "", interrupted: true });
        return fail("NOT_ALLOWED", started.message);
      }
      return await runBash(started.confined);
    } catch (err) {
      return fail("INTERNAL", `could not run bash: ${errorMessage(err)}`);
    }
  },
});
