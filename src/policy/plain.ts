// The second reading of a `bash` command, independent of tree-sitter (issue 38, item 1): a small
// hand-written tokenizer of the part of bash's grammar in which every word is literal. It accepts
// a plain list of simple commands — separated by `;`, `&&`, `||`, `|` or newlines — whose words
// are unquoted runs of safe characters, '…' strings, or "…" strings without `$`, `` ` `` or `\`,
// with the only redirections that touch no file (`2>&1`, `> /dev/null`). Anything else — any
// expansion, an escape or line continuation, a comment, a here-document, a keyword, a builtin
// that evaluates its arguments — is refused (undefined). An allow rule may only auto-approve a
// command that this reading accepts AND that tree-sitter reads as the same word lists (shell.ts).
// Conservative on purpose: what it refuses is asked, never allowed.

/** A plain command list: each simple command's words (quotes removed), in order. */
export interface PlainList {
  commands: string[][];
  /** The operator after each command but the last: ";", "\n", "&&", "||" or "|". */
  operators: string[];
}

/** Characters a word may hold outside quotes: no metacharacter, quote, escape, expansion (`$`,
 * `` ` ``, `~`, `{`, `}`, `[`, `]`, `*`, `?`: a glob becomes the names of files, which may read as
 * options), comment (`#`), history or extglob (`!`, `(`). */
const WORD_CHAR = /[A-Za-z0-9_./:@%+,=^-]/;
/** The program's name: unquoted, no glob, no `=` (an assignment), not a keyword. */
const PROGRAM = /^[A-Za-z0-9_./+:@%,-]+$/;

/** Bash's reserved words: never a plain command. */
const KEYWORDS = new Set(
  "if then else elif fi case esac for select while until do done in function time coproc".split(
    " ",
  ),
);

/**
 * Builtins that take literal words and never evaluate them (no arithmetic, no variable names, no
 * code): the only builtins a plain command may run. Every other builtin (`eval`, `source`, `.`,
 * `exec`, `command`, `builtin`, `let`, `declare`, `read`, `printf -v`, `unset`, `test -v`, `kill`,
 * `ulimit`, `trap`, `set`, …) is refused: each evaluates an argument as code, as arithmetic (where
 * an array subscript runs `$(…)`), or as a name that changes later commands.
 */
const BUILTINS_EVALUATING = new Set(
  (
    ". : [ alias bg bind break builtin caller command compgen complete compopt continue declare " +
    "dirs disown enable eval exec exit export fc fg getopts hash help history jobs kill let local " +
    "logout mapfile popd printf pushd read readarray readonly return set shift shopt source " +
    "suspend times trap type typeset ulimit umask unalias unset wait"
  ).split(" "),
);
/** The builtins a plain command may run (any other name is an external program, whose words
 * bash passes as they are). */
const SAFE_BUILTINS = new Set(["cd", "echo", "pwd", "true", "false", "test"]);
/** `test` is plain unless it names a variable (`-v a[$(…)]` evaluates the subscript). */
const TEST_NAMING_VARIABLE = new Set(["-v", "-R"]);

/** `2>&1`, `>&2`, `<&0`: a descriptor copied, no file. */
const DUP = /^[0-9]?[<>]&[0-9]$/;
/** `>`, `2>`, `>>`, `&>`, `<` to `/dev/null`. */
const TO_NULL = /^([0-9]?(>>|>|<)|&>>|&>)$/;

/** The plain reading of `text`, or undefined when any part of it is not plain. */
export function plainList(text: string): PlainList | undefined {
  const commands: string[][] = [];
  const operators: string[] = [];
  let i = 0;
  let words: string[] = [];
  /** Does the current command have an unquoted `*` or `?` in a word? */
  let globbed = false;
  /** A redirection seen in the current command (it must still have a word). */
  let redirected = false;
  /** After `&&`, `||`, `|`: a command must follow (newlines may come first). */
  let needCommand = false;

  const endCommand = (op: string | undefined): boolean => {
    if (words.length === 0) {
      // `;` or `&&` with nothing before it, or a redirection without a command: not plain.
      if (op === "\n" && !redirected && !needCommand) return true;
      return false;
    }
    if (!plainCommand(words, globbed)) return false;
    commands.push(words);
    if (op !== undefined) operators.push(op);
    words = [];
    globbed = false;
    redirected = false;
    return true;
  };

  while (i < text.length) {
    const ch = text[i]!;
    if (ch === " " || ch === "\t") {
      i++;
      continue;
    }
    if (ch === "\n") {
      i++;
      if (needCommand) continue;
      if (words.length === 0 && !redirected) continue;
      if (!endCommand("\n")) return undefined;
      continue;
    }
    if (ch === ";") {
      if (text[i + 1] === ";" || text[i + 1] === "&") return undefined;
      if (needCommand || !endCommand(";")) return undefined;
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === "&&" || two === "||") {
      if (needCommand || !endCommand(two)) return undefined;
      needCommand = true;
      i += 2;
      continue;
    }
    if (ch === "|") {
      if (two === "|&" || needCommand || !endCommand("|")) return undefined;
      needCommand = true;
      i++;
      continue;
    }
    // A redirection: an operator at a token's start, then its target.
    const redirect = /^(?:[0-9]?(?:>>|>&|>|<&|<)|&>>|&>)/.exec(text.slice(i, i + 4));
    if (redirect) {
      const op = redirect[0];
      i += op.length;
      if (op.endsWith("&")) {
        const fd = text[i];
        if (fd === undefined || !/[0-9]/.test(fd) || !DUP.test(op + fd)) return undefined;
        i++;
        if (i < text.length && !/[\s;&|]/.test(text[i]!)) return undefined;
      } else {
        if (!TO_NULL.test(op)) return undefined;
        while (text[i] === " " || text[i] === "\t") i++;
        const target = readWord(text, i);
        if (!target || target.value !== "/dev/null" || target.quoted) return undefined;
        i = target.end;
      }
      redirected = true;
      continue;
    }
    const word = readWord(text, i);
    if (!word) return undefined;
    // The program itself must be unquoted: `'rm'` or `r''m` is not a plain name.
    if (words.length === 0 && (word.quoted || !PROGRAM.test(word.value))) return undefined;
    words.push(word.value);
    globbed ||= word.globbed;
    needCommand = false;
    i = word.end;
  }
  if (needCommand) return undefined;
  if (words.length > 0 || redirected) {
    if (!endCommand(undefined)) return undefined;
  } else if (operators.length > 0 && operators.length === commands.length) {
    // A trailing `;` or newline ends the last command: no operator after it.
    operators.pop();
  }
  if (commands.length === 0) return undefined;
  return { commands, operators };
}

interface Word {
  value: string;
  end: number;
  quoted: boolean;
  /** An unquoted `*` or `?` is in it (a pathname pattern). */
  globbed: boolean;
}

/** One word from `start`, quotes removed; undefined on anything that is not literal. */
function readWord(text: string, start: number): Word | undefined {
  let i = start;
  let value = "";
  let quoted = false;
  let globbed = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) return undefined;
      value += text.slice(i + 1, close);
      quoted = true;
      i = close + 1;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        if (text[j] === "$" || text[j] === "`" || text[j] === "\\") return undefined;
        j++;
      }
      if (j >= text.length) return undefined;
      value += text.slice(i + 1, j);
      quoted = true;
      i = j + 1;
    } else if (WORD_CHAR.test(ch)) {
      value += ch;
      globbed ||= ch === "*" || ch === "?";
      i++;
    } else if (/[\s;&|<>]/.test(ch)) {
      break;
    } else {
      // `$`, `` ` ``, `\`, `#`, `~`, `{`, `}`, `[`, `]`, `(`, `)`, `!`, a control or non-ASCII
      // character outside quotes.
      return undefined;
    }
  }
  if (i === start) return undefined;
  // Digits glued to `<` or `>` name a descriptor (`12>x`), not a word.
  if (!quoted && /^[0-9]+$/.test(value) && (text[i] === "<" || text[i] === ">")) return undefined;
  return { value, end: i, quoted, globbed };
}

/** A command's words are plain when its program is neither a keyword nor an evaluating builtin. */
function plainCommand(words: string[], globbed: boolean): boolean {
  const program = words[0]!;
  if (KEYWORDS.has(program) || BUILTINS_EVALUATING.has(program)) return false;
  if (!SAFE_BUILTINS.has(program)) return true;
  // A builtin sees its words after pathname expansion: `test -? x` is `test -v x` once a file
  // named `-v` exists. No glob in a builtin's words.
  if (globbed) return false;
  if (program === "test" && words.some((w) => TEST_NAMING_VARIABLE.has(w))) return false;
  return true;
}
