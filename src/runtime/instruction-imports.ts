// Claude Code's `@path` imports in an instruction file (SPEC §9): a token `@path` at the start of
// a line or after white space names a file whose text joins the instructions, resolved relative
// to the importing file (`@~/x` from the home directory, `@/x` as is). Inside a code span or a
// fenced code block it is text, not an import — an example of the syntax, an npm scope in a shell
// line. A backslash keeps a space in the path (`@my\ notes.md`).
import path from "node:path";

/** The import paths `text` names, in order, each once, as written (not yet resolved). */
export function importPaths(text: string): string[] {
  const found: string[] = [];
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker[0]!;
      else if (marker[0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    // Code spans become blanks, so an `@x` inside one is not seen and positions stay apart.
    const plain = line.replace(/(`+)[^`]*?\1/g, (span) => " ".repeat(span.length));
    for (const match of plain.matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
      // Punctuation that ends a sentence is not part of the path ("see @docs/a.md.").
      const given = match[1]!.replace(/\\ /g, " ").replace(/[.,;:!?)\]]+$/, "");
      if (given && !found.includes(given)) found.push(given);
    }
  }
  return found;
}

/** Where an import written in `importer` points (`~` is `home`). */
export function resolveImport(given: string, importer: string, home: string): string {
  if (given === "~" || given.startsWith("~/")) return path.join(home, given.slice(1));
  return path.resolve(path.dirname(importer), given);
}
