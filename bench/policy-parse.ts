// What the parsed bash policy (issue 28, item 2) adds to a `bash` call: a command decided by the
// policy (tree-sitter-bash parse, every simple command matched) and then spawned, beside the same
// spawn alone, alternating so load drift hits both; the p50 difference must stay under 5 ms
// (together with the sandbox, which bench rows of its own measure). Also the parser's one-time
// load per process or worker thread, and the decision alone.
import { spawn } from "node:child_process";
import { decide, validatePolicy } from "../src/policy/policy.js";
import { loadShellParser } from "../src/policy/shell.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { median, nowMs, percentile } from "./stats.js";

const CALLS = 200;
const POLICY = validatePolicy(
  { bash: { allow: ["git log *", "npm test*", "ls *", "echo *"], deny: ["rm -rf *"] } },
  "policy",
);
/** What models send: short commands, compound ones, a heredoc. */
const COMMANDS = [
  "echo hello",
  "ls -la src && git log --oneline -5 | head -3",
  "cd src && npm test -- --run policy 2>&1 | tail -20",
  "cat <<'EOF' > notes.md\n# notes\nsome text $(not run)\nEOF",
  "for f in *.ts; do echo $f; done",
  // Issue 38's kind: a line continuation before a comment, read twice (tree-sitter, plain.ts).
  "ls x\\\n#; touch a; rm -rf b",
];

function run(command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command.startsWith("cat") ? "true" : "true"], {
      stdio: "ignore",
    });
    child.on("error", reject);
    child.on("exit", () => resolve());
  });
}

export async function policyParse(context: BenchContext): Promise<BenchRow[]> {
  const { signal, log } = context;
  const loadStarted = nowMs();
  await loadShellParser();
  const loadMs = nowMs() - loadStarted;
  const plain: number[] = [];
  const parsed: number[] = [];
  const decisions: number[] = [];
  /** The same decisions in CPU time: on a loaded machine wall time also counts waiting for a core. */
  const decisionsCpu: number[] = [];
  for (let i = 0; i < 10; i++) await run("true"); // warm-up
  // The parser's and matcher's first calls compile (JIT); a running warren has made them.
  for (let i = 0; i < 50; i++)
    decide(POLICY, [], "bash", { command: COMMANDS[i % COMMANDS.length] });
  for (let i = 0; i < CALLS && !signal.aborted; i++) {
    const command = COMMANDS[i % COMMANDS.length]!;
    let started = nowMs();
    await run(command);
    plain.push(nowMs() - started);
    started = nowMs();
    const cpu = process.cpuUsage();
    decide(POLICY, [], "bash", { command });
    decisions.push(nowMs() - started);
    const spent = process.cpuUsage(cpu);
    decisionsCpu.push((spent.user + spent.system) / 1000);
    await run(command);
    parsed.push(nowMs() - started);
  }
  const added = median(parsed) - median(plain);
  log(`policy-parse: p50 ${median(parsed).toFixed(2)} vs ${median(plain).toFixed(2)} ms`);
  return [
    row(
      "bash call p50 with the parsed policy",
      median(parsed),
      "ms",
      "plain spawn p50",
      median(plain),
    ),
    row(
      "policy decision p50 (parse + match)",
      median(decisions),
      "ms",
      "added to a call's p50",
      added,
    ),
    row("policy decision p99", percentile(decisions, 99), "ms", "the 5 ms budget", 5),
    row("policy decision p99, CPU time", percentile(decisionsCpu, 99), "ms", "the 5 ms budget", 5),
    row("shell parser load, once per thread", loadMs, "ms", "decision p50", median(decisions)),
  ];
}
