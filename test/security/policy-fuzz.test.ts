// The differential fuzz of the bash policy (issue 38, item 1): commands generated per class of
// known disagreement between tree-sitter and bash (comments and line continuations, quotes,
// arithmetic, braces and globs in program names, expansions, here-documents, separators), each
// decided under a policy allowing `ls *`, `echo *`, `cat *`, `git status*` and denying `rm *`,
// then RUN by real bash in an empty temporary directory whose PATH holds only shims: each shim
// (ls, cat, git, touch, rm, …) appends its name and argv to a log and does nothing else. So the
// log is what bash actually executed. Two properties:
// - a command the policy allows ran exactly the external commands the parser saw, with the same
//   words (all shims succeed: with `||` in it, a subset of them), and nothing else (no "command
//   not found");
// - a command under which bash ran `rm` is denied.
// Any disagreement fails, with the command that shows it (fast-check shrinks it).
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide, validatePolicy } from "../../src/policy/policy.js";
import { analyseShell, loadShellParser } from "../../src/policy/shell.js";

const POLICY = validatePolicy(
  { bash: { allow: ["ls *", "echo *", "cat *", "git status*"], deny: ["rm *"] } },
  "policy",
);
const SHIMMED = ["ls", "cat", "git", "touch", "rm", "id", "sh", "bash", "xargs", "env", "wc"];
/** Builtins the generated commands may run: bash runs them itself, no shim sees them. */
const BUILTIN = new Set(["echo", "true", "cd", "pwd", "test"]);
const RUNS_PER_CLASS = Number(process.env.POLICY_FUZZ_RUNS ?? 60);

let root: string;
let shims: string;
let log: string;
const seen = { allowed: 0, denied: 0, ran: 0 };

beforeAll(async () => {
  await loadShellParser();
  root = mkdtempSync(path.join(os.tmpdir(), "warren-policy-fuzz-"));
  shims = path.join(root, "bin");
  mkdirSync(shims);
  log = path.join(root, "log");
  for (const name of SHIMMED) {
    const shim = path.join(shims, name);
    // One write per call (records of a pipeline's commands do not interleave).
    writeFileSync(
      shim,
      `#!/bin/bash\nprintf -v rec '%s\\x1f' "\${0##*/}" "$@"\nprintf '%s\\x1e' "$rec" >> "$PROBE_LOG"\n`,
    );
    chmodSync(shim, 0o755);
  }
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

interface Ran {
  commands: string[][];
  stderr: string;
}

/** Runs `command` under bash in a fresh empty directory (with the shims at ./bin too). */
function run(command: string): Ran {
  const cwd = mkdtempSync(path.join(root, "cwd-"));
  mkdirSync(path.join(cwd, "d"));
  // `./bin/r?` and the like reach the shims, never a real program.
  symlinkSync(shims, path.join(cwd, "bin"));
  writeFileSync(log, "");
  const result = spawnSync("/bin/bash", ["-c", command], {
    cwd,
    env: { PATH: shims, PROBE_LOG: log, HOME: cwd, LC_ALL: "C.UTF-8" },
    encoding: "utf8",
    timeout: 5_000,
    input: "",
  });
  seen.ran++;
  const records = readFileSync(log, "utf8")
    .split("\x1e")
    .filter((r) => r !== "");
  rmSync(cwd, { recursive: true, force: true });
  return {
    commands: records.map((r) => r.split("\x1f").slice(0, -1)),
    stderr: result.stderr ?? "",
  };
}

/** The external commands the parser saw (builtins run inside bash: no shim sees them). */
function parsedRuns(command: string): string[][] {
  return analyseShell(command)
    .commands.map((c) => c.argv)
    .filter((words) => !BUILTIN.has(words[0]!))
    .map((words) => [path.posix.basename(words[0]!), ...words.slice(1)]);
}

/** Is every run of `ran` one of `parsed` (as many times at most)? */
function within(ran: string[][], parsed: string[][]): boolean {
  const left = sorted(parsed);
  return sorted(ran).every((r) => {
    const at = left.indexOf(r);
    if (at < 0) return false;
    left.splice(at, 1);
    return true;
  });
}

const sorted = (runs: string[][]): string[] => runs.map((r) => JSON.stringify(r)).sort();

function check(command: string): void {
  const { verdict } = decide(POLICY, [], "bash", { command });
  if (verdict === "allow") seen.allowed++;
  if (verdict === "deny") seen.denied++;
  // A denied command is not run (it may well run rm: that is the point of denying it).
  if (verdict === "deny") return;
  const ran = run(command);
  const ranRm = ran.commands.some((c) => c[0] === "rm");
  if (ranRm) throw new Error(`bash ran rm, the policy said ${verdict}: ${JSON.stringify(command)}`);
  if (verdict !== "allow") return;
  // Every shim succeeds, so every command runs, but for a branch after `||`: with one in the
  // text, what ran must be among what the parser saw; without, exactly that.
  const expected = parsedRuns(command);
  const agree = command.includes("||")
    ? within(ran.commands, expected)
    : JSON.stringify(sorted(ran.commands)) === JSON.stringify(sorted(expected));
  if (!agree) {
    throw new Error(
      `allowed ${JSON.stringify(command)}: the parser saw ${JSON.stringify(expected)}, ` +
        `bash ran ${JSON.stringify(ran.commands)}`,
    );
  }
  if (/command not found|No such file/.test(ran.stderr)) {
    throw new Error(`allowed ${JSON.stringify(command)}: bash ran more: ${ran.stderr}`);
  }
}

// Fragments. A word is one to three pieces glued; pieces are plain most of the time, so that
// some commands are allowed and the comparison is not vacuous.
const plainPiece = fc.stringMatching(/^[a-z0-9._=-]{1,6}$/);
const quoted = fc.oneof(
  plainPiece.map((s) => `'${s} x'`),
  plainPiece.map((s) => `"${s} y"`),
  fc.constantFrom("'a # b'", '"c # d"', "'$x'", "'`id`'", "'a\nb'", '"!x"', "''", '""'),
);
const hostilePiece = fc.constantFrom(
  "\\\n",
  "\\\n#",
  "#",
  " #",
  "\\#",
  "\\",
  "\\ ",
  "$x",
  "${x}",
  "${x:-rm}",
  "${PATH:x}",
  "$((x))",
  "$((1+1))",
  "$(touch p)",
  "$(rm -rf d)",
  "`touch p`",
  "<(touch p)",
  "{a,b}",
  "{rm,-rf,d}",
  "*",
  "?",
  "[a]",
  "$'a'",
  "$'\\x72m'",
  '$"a"',
  "~",
  "a[$(touch p)]",
  "!",
  "&",
  "\t",
  "\r",
  ";",
  "'",
  '"',
);
const piece = (hostile: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 5, arbitrary: plainPiece }, { weight: 2, arbitrary: quoted }, hostile);
const word = (hostile: fc.Arbitrary<string>) =>
  fc.array(piece(hostile), { minLength: 1, maxLength: 3 }).map((p) => p.join(""));
const program = fc.constantFrom("ls", "echo", "cat", "git status", "git", "touch", "rm");
const mangledProgram = fc.constantFrom(
  "l\\s",
  "'ls'",
  "r''m",
  '"r"m',
  "r\\m",
  "{rm,-rf,d}",
  "./bin/r?",
  "./bin/[r]m",
  "./bin/rm",
  "$x",
  "${x:-rm}",
  "$(echo rm)",
  "$'rm'",
  "\\rm",
);
const separator = fc.constantFrom(" ; ", " && ", " || ", " | ", "\n", " & ", ";", "&&");

const simple = (hostile: fc.Arbitrary<string>, prog: fc.Arbitrary<string> = program) =>
  fc
    .tuple(prog, fc.array(word(hostile), { maxLength: 3 }))
    .map(([p, args]) => [p, ...args].join(" "));
const list = (cmd: fc.Arbitrary<string>, sep: fc.Arbitrary<string> = separator) =>
  fc
    .tuple(cmd, fc.array(fc.tuple(sep, cmd), { maxLength: 3 }))
    .map(([first, rest]) => first + rest.map(([s, c]) => s + c).join(""));

const only = (...pieces: string[]) => fc.constantFrom(...pieces);

/** One generator per class of known disagreement. */
const CLASSES: Record<string, fc.Arbitrary<string>> = {
  "comments and line continuations": list(
    simple(only("\\\n", "\\\n#", "#", " #", "\\#", "#x", "\\\n\\\n")),
    fc.constantFrom(" ; ", "\n", " && ", " # c\n", "\\\n; ", " \\\n&& "),
  ),
  quotes: list(simple(only("'", '"', "'a'\"b\"", "\\'", '\\"', "'\\'", '"\\"', "$'a'", '$"a"'))),
  arithmetic: fc.oneof(
    list(simple(only("$((x))", "$((1+1))", "${x:1}", "${PATH:x}", "a[$(touch p)]"))),
    list(
      fc.constantFrom(
        "(( x ))",
        "[[ x -eq 0 ]]",
        "let x",
        "x='a[$(touch p)]'",
        "test -v 'a[$(touch p)]'",
        "shift 'a[$(touch p)]'",
        "for x in 'a[$(touch p)]'; do ls $((x)); done",
        "ls",
        "echo ok",
      ),
    ),
  ),
  "braces and globs in program names": list(
    simple(only("{a,b}", "*", "?", "[a]", "{-rf,d}"), fc.oneof(program, mangledProgram)),
  ),
  expansions: list(
    simple(
      only("$x", "${x}", "${x:-rm}", "$(touch p)", "`touch p`", "<(touch p)", "~", "$(rm -rf d)"),
      fc.oneof(program, mangledProgram),
    ),
  ),
  "here-documents": list(
    fc.oneof(
      simple(only("x")),
      fc.constantFrom(
        "cat <<EOF\n$(touch p)\nEOF",
        "cat <<'EOF'\n$(touch p)\nEOF",
        "cat <<EOF\nx\nEOF\ntouch p",
        "cat <<< $(touch p)",
        "cat <<-EOF\n\tx\n\tEOF",
        "sh <<EOF\nrm -rf d\nEOF",
      ),
    ),
  ),
  separators: list(simple(hostilePiece), separator),
};

describe("the policy and bash agree on every command the policy allows", () => {
  it.each(Object.keys(CLASSES))("%s", (name) => {
    fc.assert(
      fc.property(CLASSES[name]!, (command) => {
        check(command);
      }),
      { numRuns: RUNS_PER_CLASS },
    );
  });

  it("was not vacuous: commands were allowed and run, others denied", () => {
    expect(seen.allowed).toBeGreaterThan(20);
    expect(seen.denied).toBeGreaterThan(10);
    expect(seen.ran).toBeGreaterThan(100);
  });
});

describe("the probe sees what bash runs", () => {
  it("records a pipeline's commands and their words; a skipped `||` branch is absent", () => {
    const ran = run("ls 'a b' | cat x && git status || touch p; echo hi");
    expect(sorted(ran.commands)).toEqual(
      sorted([
        ["ls", "a b"],
        ["cat", "x"],
        ["git", "status"],
      ]),
    );
    const parsed = parsedRuns("ls 'a b' | cat x && git status || touch p; echo hi");
    expect(within(ran.commands, parsed)).toBe(true);
    expect(within(parsed, ran.commands)).toBe(false);
  });

  it("sees the measured bypasses run (so an allow of them would fail the fuzz)", () => {
    const ran = run("ls x\\\n#; touch a; rm -rf b");
    expect(ran.commands.map((c) => c[0])).toEqual(["ls", "touch", "rm"]);
    expect(run("{rm,-rf,d}").commands).toEqual([["rm", "-rf", "d"]]);
    expect(run("./bin/r? -rf d").commands).toEqual([["rm", "-rf", "d"]]);
  });
});
