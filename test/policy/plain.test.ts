// The plain reading (plain.ts), table-tested: what it accepts (the words bash passes), what it
// refuses (anything not a plain list of literal simple commands).
import { describe, expect, it } from "vitest";
import { plainList } from "../../src/policy/plain.js";

describe("the plain reading accepts", () => {
  it.each([
    ["ls -la src", [["ls", "-la", "src"]], []],
    ["ls && echo done || true", [["ls"], ["echo", "done"], ["true"]], ["&&", "||"]],
    ["ls | cat; git status\n", [["ls"], ["cat"], ["git", "status"]], ["|", ";"]],
    ["ls &&\n  echo x", [["ls"], ["echo", "x"]], ["&&"]],
    ["echo 'a # $b' \"c d!\"", [["echo", "a # $b", "c d!"]], []],
    ["echo 'line\nbreak'", [["echo", "line\nbreak"]], []],
    ["ls > /dev/null 2>&1", [["ls"]], []],
    [">/dev/null ls x 2>>/dev/null", [["ls", "x"]], []],
    ["ls '*.ts' a=b", [["ls", "*.ts", "a=b"]], []],
    ["\n\nls\n\necho\n", [["ls"], ["echo"]], ["\n"]],
  ])("%j", (text, commands, operators) => {
    expect(plainList(text)).toEqual({ commands, operators });
  });
});

describe("the plain reading refuses", () => {
  it.each([
    "",
    "ls x\\\n#; touch a",
    "ls \\x",
    "ls # c",
    "ls a#b",
    "ls $x",
    'ls "$x"',
    "ls `id`",
    "ls $(id)",
    "ls <(id)",
    "ls $'x'",
    'ls $"x"',
    "ls ~",
    "ls {a,b}",
    "ls a[1]",
    "{ ls; }",
    "(ls)",
    "ls & ls",
    "ls |& cat",
    "ls ;; ls",
    "; ls",
    "ls &&",
    "ls | ",
    "ls <<EOF\nx\nEOF",
    "ls <<< x",
    "ls > out",
    "ls >& out",
    "ls 2>&1x",
    "ls 12>/dev/null",
    "ls > '/dev/null'",
    "'ls'",
    "l's'",
    "/bin/l? x",
    "x=1 ls",
    "if ls; then ls; fi",
    "time ls",
    "eval ls",
    "source x",
    ". x",
    "exec ls",
    "command ls",
    "builtin echo",
    "let x",
    "declare x",
    "read x",
    "printf x",
    "unset x",
    "test -v x",
    "test -? x",
    "echo *",
    "ls *.ts",
    "ls a?",
    "ls\r",
    "ls\u00a0x",
    "ｌｓ",
    "echo 'open",
    'echo "open',
  ])("%j", (text) => {
    expect(plainList(text)).toBeUndefined();
  });
});
