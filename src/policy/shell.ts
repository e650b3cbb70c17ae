// A `bash` command as the policy sees it (SPEC §3, issue 28): parsed by tree-sitter-bash (through
// web-tree-sitter, WebAssembly, no network, no native build) into its simple commands — across
// `;`, `&&`, `||`, `|`, `&`, newlines, subshells, braces, if/while/for/case bodies, function
// bodies and substitutions — each with its program normalised (`/bin/rm`, `\rm`, `'rm'`, `r''m`
// are `rm`), plus the reasons, if any, why the command cannot be seen through (a substitution,
// `eval`, `sh -c`, a wrapper running another command, a redirection to a file, …). The parser
// loads lazily, once per process or worker thread (loadShellParser); parsing is synchronous.
import { createRequire } from "node:module";
import path from "node:path";
import type { Node, Parser as ParserType } from "web-tree-sitter";
import { plainList, type PlainList } from "./plain.js";

/** One simple command: its words, the program normalised for deny, as written for allow. */
export interface SimpleCommand {
  /** The command as deny patterns see it: program's base name, words joined by one space. */
  denyText: string;
  /** As allow patterns see it: like denyText, but a program named by a path outside the system
   * directories keeps its path (`./ls` is not `ls`). */
  allowText: string;
  /** The words, program normalised (base name) then the arguments' values. */
  words: string[];
  /** The words as bash passes them: the program as written, then the arguments' values. */
  argv: string[];
  /** Every word is literal (no expansion, substitution, brace, tilde or `[` outside quotes; a `*`
   * or `?` in an argument is a pathname pattern, allowed). */
  literal: boolean;
  /** Every word reaches the program as written: literal and no glob at all (for deny). */
  fixed: boolean;
  /** The program is named statically: unquoted, unescaped, no expansion, brace or glob. A
   * program that is not counts as a match for every deny pattern (commands.ts). */
  resolved: boolean;
}

export interface ShellAnalysis {
  /** The plain reading (plain.ts) accepted the command and agrees with the parse. */
  plain?: boolean;
  /** The parse could not name every program: the command does not parse, or is too long. Every
   * deny pattern then matches (commands.ts). */
  unresolved?: boolean;
  /** Every simple command found, in order, including those inside substitutions and wrappers. */
  commands: SimpleCommand[];
  /** Why an allow pattern cannot cover this command (empty: it can be seen through). */
  opaque: string[];
}

let parserPromise: Promise<ParserType> | undefined;
let parser: ParserType | undefined;

/**
 * Loads the parser once per process or worker thread (each thread has its own module state).
 * Both .wasm files are found through Node's resolver from wherever this code runs (dist/, the
 * bundle, or an installed package): web-tree-sitter stays external to the bundle for that.
 */
export function loadShellParser(): Promise<ParserType> {
  parserPromise ??= (async () => {
    const require = createRequire(import.meta.url);
    const { Parser, Language } = await import("web-tree-sitter");
    const runtimeWasm = require.resolve("web-tree-sitter/tree-sitter.wasm");
    await Parser.init({ locateFile: () => runtimeWasm });
    const bash = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const p = new Parser();
    p.setLanguage(bash);
    parser = p;
    return p;
  })();
  parserPromise.catch(() => (parserPromise = undefined));
  return parserPromise;
}

/** True once loadShellParser has finished in this thread. */
export function shellParserLoaded(): boolean {
  return parser !== undefined;
}

/** Longer commands are not parsed: they are asked (deny patterns still see the whole line). */
export const MAX_PARSED_CHARS = 100_000;
/** How deep `sh -c '…'`, `eval '…'` and heredocs fed to a shell are parsed again for deny. */
const MAX_NESTING = 6;

/** Programs that run shell code from a string, a file or stdin. */
const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "fish",
  "csh",
  "tcsh",
  "busybox",
  "rbash",
]);

/** Builtins that run a string as code, or change what later names mean. */
const EVALUATORS = new Set([
  "eval",
  "source",
  ".",
  "trap",
  "alias",
  "enable",
  "hash",
  "fc",
  "bind",
  "complete",
  "mapfile",
  "readarray",
  "let",
  "read",
  "printf",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "getopts",
  "shopt",
  "set",
]);

/** Programs whose arguments name another command that they run. */
const WRAPPERS = new Set([
  "env",
  "exec",
  "command",
  "builtin",
  "xargs",
  "nohup",
  "timeout",
  "nice",
  "ionice",
  "chrt",
  "taskset",
  "sudo",
  "doas",
  "su",
  "runuser",
  "time",
  "coproc",
  "setsid",
  "stdbuf",
  "unbuffer",
  "chronic",
  "flock",
  "watch",
  "parallel",
  "script",
  "strace",
  "ltrace",
  "chroot",
  "unshare",
  "nsenter",
  "firejail",
  "bwrap",
  "systemd-run",
  "start-stop-daemon",
  "npx",
  "dbus-launch",
]);

/** `printf`, `read`… only opaque with these (they assign a variable or run a callback). */
const OPAQUE_ONLY_WITH: Record<string, (args: string[]) => boolean> = {
  printf: (args) => args.some((a) => a === "-v" || a.startsWith("-v")),
  set: (args) => args.length > 0,
};

const SYSTEM_DIRS = new Set(["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"]);

/**
 * The simple commands of `command` and why it is opaque, if it is. Requires loadShellParser to
 * have finished in this thread (throws otherwise: a caller forgot to await it).
 */
export function analyseShell(command: string): ShellAnalysis {
  const out: ShellAnalysis = { commands: [], opaque: [] };
  if (command.length > MAX_PARSED_CHARS) {
    out.opaque.push(`longer than ${MAX_PARSED_CHARS} characters`);
    out.unresolved = true;
    return out;
  }
  analyseInto(command, out, 0);
  // The second, independent reading: only a plain list of literal simple commands, read into the
  // same words by both, can be covered by an allow pattern or a tree rule.
  if (out.opaque.length === 0) {
    const plain = plainList(command);
    if (!plain) out.opaque.push("not a plain list of simple commands with literal words");
    else if (sameWords(plain, out.commands)) out.plain = true;
    else {
      // One of the two misreads it, so neither can name its programs for deny either.
      out.opaque.push("the two readings of it disagree");
      out.unresolved = true;
    }
  }
  return out;
}

/** Do tree-sitter's simple commands and the plain reading hold the same words, in order? */
function sameWords(plain: PlainList, commands: readonly SimpleCommand[]): boolean {
  if (plain.commands.length !== commands.length) return false;
  return commands.every((c, i) => {
    const words = plain.commands[i]!;
    return c.literal && c.argv.length === words.length && c.argv.every((w, j) => w === words[j]);
  });
}

/** A program name bash takes as it is written: no quote, escape, expansion, brace or glob. */
const STATIC_PROGRAM = /^[A-Za-z0-9_./+:@%,-]+$/;

function analyseInto(command: string, out: ShellAnalysis, depth: number): void {
  if (!parser) throw new Error("the shell parser is not loaded (await loadShellParser())");
  const tree = parser.parse(command);
  if (!tree) {
    out.opaque.push("the shell parser gave up");
    return;
  }
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      out.opaque.push("does not parse as a shell command");
      if (depth === 0) out.unresolved = true;
    }
    const shellFed: string[] = [];
    let hasShell = false;
    // Iterative: a hostile command may nest thousands deep.
    const stack: Node[] = [root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      switch (node.type) {
        case "command":
          hasShell = simpleCommand(node, out, depth) || hasShell;
          break;
        case "declaration_command":
        case "unset_command":
          declaration(node, out);
          break;
        case "variable_assignment":
          out.opaque.push(`assigns a variable (${clip(node.text)})`);
          break;
        case "command_substitution":
          out.opaque.push(`runs a command substitution (${clip(node.text)})`);
          break;
        case "process_substitution":
          out.opaque.push(`runs a process substitution (${clip(node.text)})`);
          break;
        case "arithmetic_expansion":
        case "arithmetic_command":
        case "c_style_for_statement":
        case "subscript":
          // Numbers and operators only are harmless; a name is evaluated (recursively) as code.
          if (/[A-Za-z_$`]/.test(node.text.replace(/^\$\(\(/, ""))) {
            out.opaque.push(`evaluates arithmetic on variables (${clip(node.text)})`);
          }
          break;
        case "expansion":
          if (/@[A-Za-z]\s*\}$/.test(node.text) || node.text.startsWith("${!")) {
            out.opaque.push(`an expansion that can run code (${clip(node.text)})`);
          }
          break;
        case "test_command":
          if (/[$`]/.test(node.text)) out.opaque.push(`a [[ test ]] on expansions`);
          break;
        case "function_definition":
          out.opaque.push(`defines a function (${clip(node.text)})`);
          break;
        case "file_redirect":
          fileRedirect(node, out);
          break;
        case "heredoc_body":
          shellFed.push(node.text);
          break;
        case "herestring_redirect":
          shellFed.push(literal(node.namedChildren[0]) ?? node.text);
          break;
        case "ERROR":
          out.opaque.push("does not parse as a shell command");
          break;
      }
      if (node.isMissing) out.opaque.push("does not parse as a shell command");
      const children = node.children;
      for (let i = children.length - 1; i >= 0; i--) {
        const child = children[i];
        if (child) stack.push(child);
      }
    }
    // A heredoc or here-string in a line that runs a shell may be the shell's script: its text is
    // looked through for denied commands too.
    if (hasShell && depth < MAX_NESTING) {
      for (const text of shellFed) nested(text, out, depth);
    }
  } finally {
    tree.delete();
  }
}

/** Parses `text` (an `sh -c` string, an `eval`'s words, a heredoc) for its commands only. */
function nested(text: string, out: ShellAnalysis, depth: number): void {
  if (depth >= MAX_NESTING) return;
  const inner: ShellAnalysis = { commands: [], opaque: [] };
  analyseInto(text, inner, depth + 1);
  out.commands.push(...inner.commands);
}

/** Returns true when the command runs a shell. */
function simpleCommand(node: Node, out: ShellAnalysis, depth: number): boolean {
  const nameNode = node.childForFieldName("name");
  const args = node.childrenForFieldName("argument").filter((n): n is Node => n !== null);
  if (!nameNode) return false;
  const written = literal(nameNode.namedChildren[0] ?? nameNode);
  const argsLiteral = args.every((a) => staticWord(a, false));
  const argFixed = args.map((a) => staticWord(a, true));
  const argsFixed = argFixed.every(Boolean);
  if (written === undefined || written === "") {
    out.opaque.push(`the program is an expansion (${clip(nameNode.text)})`);
    // Deny patterns still see what is visible.
    pushCommand(out, nameNode.text, args.map(wordText), {
      resolved: false,
      literal: false,
      fixed: false,
    });
    return false;
  }
  const argv = args.map(wordText);
  const resolved = STATIC_PROGRAM.test(nameNode.text);
  const name = pushCommand(out, written, argv, {
    resolved,
    literal: resolved && argsLiteral,
    fixed: resolved && argsFixed,
  });
  if (SHELLS.has(name)) {
    out.opaque.push(`runs a shell (${name})`);
    const c = argv.findIndex((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a));
    const script = c >= 0 ? args[c + 1] : undefined;
    if (script) nested(literal(script) ?? script.text, out, depth);
    return true;
  }
  if (EVALUATORS.has(name)) {
    const test = OPAQUE_ONLY_WITH[name];
    if (!test || test(argv)) out.opaque.push(`${name} can run code or change later commands`);
    if (name === "eval" || name === "trap") nested(argv.join(" "), out, depth);
  }
  if (WRAPPERS.has(name)) {
    out.opaque.push(`${name} runs another command`);
    wrapped(argv, argFixed, out, depth);
  }
  if (
    name === "find" &&
    argv.some((a) => /^-(exec|execdir|ok|okdir|delete|fprint.*|fls)$/.test(a))
  ) {
    out.opaque.push("find runs a command or writes with its arguments");
    const at = argv.findIndex((a) => /^-(exec|execdir|ok|okdir)$/.test(a));
    if (at >= 0) wrapped(argv.slice(at + 1), argFixed.slice(at + 1), out, depth);
  }
  if (name === "git" && argv.some((a) => a === "-c" || a.startsWith("--exec-path"))) {
    out.opaque.push("git -c can make git run a command");
  }
  return false;
}

/**
 * The commands a wrapper may run, for deny patterns: from every word that could start the
 * wrapped command (options with values make the exact one unknowable), and a shell's `-c` string.
 */
function wrapped(argv: string[], fixed: boolean[], out: ShellAnalysis, depth: number): void {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    const rest = argv.slice(i);
    pushCommand(out, word, rest.slice(1), {
      // The wrapper runs the word as it receives it: known unless bash expands it first.
      resolved: fixed[i] === true,
      literal: false,
      fixed: false,
    });
    if (/\s/.test(word)) nested(word, out, depth);
  }
}

function declaration(node: Node, out: ShellAnalysis): void {
  const first = node.children[0];
  const name = first?.text ?? "declare";
  const argv = node.namedChildren
    .filter((n): n is Node => n !== null)
    .map((n) => (n.type === "variable_assignment" ? n.text : wordText(n)));
  pushCommand(out, name, argv, { resolved: true, literal: false, fixed: false });
  out.opaque.push(`${name} can change later commands`);
}

function fileRedirect(node: Node, out: ShellAnalysis): void {
  const destination = node.childForFieldName("destination");
  const op = node.children.find((c) => c !== null && !c.isNamed)?.type ?? "";
  const target = destination ? literal(destination) : undefined;
  // `2>&1`, `>&2`, `<&0`, `>&-`: descriptors, no file.
  if (
    (op === ">&" || op === "<&" || op === ">&-" || op === "<&-") &&
    /^(\d+|-)?$/.test(target ?? "x")
  ) {
    return;
  }
  if (target === "/dev/null") return;
  out.opaque.push(`redirects to or from a file (${clip(node.text)})`);
}

/** Records one simple command; returns its normalised program name. */
function pushCommand(
  out: ShellAnalysis,
  written: string,
  argv: string[],
  how: { resolved: boolean; literal: boolean; fixed: boolean },
): string {
  const name = programName(written);
  const asWritten =
    written.includes("/") && !SYSTEM_DIRS.has(path.posix.dirname(written)) ? written : name;
  const tail = argv.length > 0 ? ` ${argv.join(" ")}` : "";
  out.commands.push({
    denyText: collapse(name + tail),
    allowText: collapse(asWritten + tail),
    words: [name, ...argv],
    argv: [written, ...argv],
    ...how,
  });
  return name;
}

/** `/usr/bin/rm` → `rm`; unicode lookalikes folded (NFKC: `ｒｍ` → `rm`). */
export function programName(written: string): string {
  const folded = written.normalize("NFKC");
  const base = folded.includes("/") ? path.posix.basename(folded) : folded;
  return base;
}

/** Runs of whitespace are one space; ends trimmed. */
export function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * A word bash passes as written: literal, no brace expansion, and no tilde or `[` outside quotes
 * (`{a,b}`, `~`, `[x]`: each may become other words); with `noGlob`, no `*` or `?` either.
 */
function staticWord(node: Node, noGlob: boolean): boolean {
  if (literal(node) === undefined) return false;
  // A brace expands with a comma or a range in it (`{a,b}`, `{1..3}`; `{}` stays itself): looked
  // for in the whole text, quotes included, to err on the side of "may expand".
  if (/\{[^]*(,|\.\.)[^]*\}/.test(node.text)) return false;
  const unquoted = node.type === "concatenation" ? node.namedChildren : [node];
  const special = noGlob ? /[*?[\]~]/ : /[[\]~]/;
  return unquoted.every((p) => p === null || p.type !== "word" || !special.test(p.text));
}

/** A word's value when it is fixed by its text, else its source text. */
function wordText(node: Node): string {
  return literal(node) ?? node.text;
}

/** A word's value when no expansion is in it (quotes and escapes removed), else undefined. */
export function literal(node: Node | null | undefined): string | undefined {
  if (!node) return undefined;
  switch (node.type) {
    case "word":
    case "number":
      return node.text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1");
    case "raw_string":
      return node.text.slice(1, -1);
    case "ansi_c_string":
      return ansiC(node.text.slice(2, -1));
    case "string": {
      const parts = node.namedChildren;
      if (parts.some((p) => p !== null && p.type !== "string_content")) return undefined;
      const text = node.text.startsWith("$") ? node.text.slice(2, -1) : node.text.slice(1, -1);
      return text.replace(/\\\n/g, "").replace(/\\([\\"$`])/g, "$1");
    }
    case "concatenation": {
      let value = "";
      for (const part of node.namedChildren) {
        const v = literal(part);
        if (v === undefined) return undefined;
        value += v;
      }
      // Anonymous pieces (a lone `$`, quotes) make the value unknowable: use the source.
      if (node.children.some((c) => c !== null && !c.isNamed)) return undefined;
      return value;
    }
    case "command_name":
      return literal(node.namedChildren[0]);
    default:
      return undefined;
  }
}

/** Decodes `$'…'` escapes (enough to see the program: \xHH, \uHHHH, octal, the usual letters). */
function ansiC(body: string): string {
  const simple: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    v: "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
  };
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_m, esc: string) => {
      const kind = esc[0]!;
      if (kind === "x" || kind === "u" || kind === "U") {
        return String.fromCodePoint(parseInt(esc.slice(1), 16));
      }
      if (/[0-7]/.test(kind)) return String.fromCharCode(parseInt(esc, 8));
      if (kind === "c") return String.fromCharCode(esc.charCodeAt(1) & 31);
      return simple[kind] ?? `\\${esc}`;
    },
  );
}

function clip(text: string): string {
  const line = collapse(text);
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
