// The docs check (`npm run check` runs it): what README.md and docs/*.md point at must exist.
//   - every relative link [text](path#anchor): the file, and the anchor among its headings;
//   - every `npm run NAME` (and `npm start` / `npm test`) the README shows: a script of package.json;
//   - every `warren WORD` the README shows in code: a subcommand of src/cli/commands.ts (or help);
//   - every repository path named in code (`src/…`, `test/…`, `bench/…`, …; globs left out): a file.
// `node scripts/check-docs.js [--root DIR]` prints one line per problem and exits 1 when any.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown file's headings (outside code fences), duplicates numbered. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const line of withoutFences(text).split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1].replace(/`/g, ""));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The text with fenced code blocks blanked (line numbers kept). */
function withoutFences(text) {
  let inFence = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line;
    })
    .join("\n");
}

/** The code of a Markdown text: fenced blocks and inline `spans`, each with its line number. */
function codeOf(text) {
  const pieces = [];
  let inFence = false;
  text.split("\n").forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      return;
    }
    if (inFence) pieces.push({ line: i + 1, code: line });
    else
      for (const span of line.matchAll(/`([^`]+)`/g)) pieces.push({ line: i + 1, code: span[1] });
  });
  return pieces;
}

/** The subcommand names of the command line, read from src/cli/commands.ts (not hard-coded). */
export function subcommandsOf(root) {
  const source = readFileSync(path.join(root, "src/cli/commands.ts"), "utf8");
  const names = [...source.matchAll(/(?:^|[{,])\s*name:\s*"([a-z][a-z-]*)"/gm)].map((m) => m[1]);
  if (names.length === 0) throw new Error("no commands found in src/cli/commands.ts");
  return new Set([...names, "help"]);
}

function checkLinks(root, file, text, problems) {
  const where = path.relative(root, file);
  withoutFences(text)
    .split("\n")
    .forEach((line, i) => {
      for (const link of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = link[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [rawPath, anchor] = target.split("#", 2);
        const linked = rawPath ? path.resolve(path.dirname(file), decodeURI(rawPath)) : file;
        if (!existsSync(linked)) {
          problems.push(`${where}:${i + 1}: link to a missing file: ${target}`);
          continue;
        }
        if (anchor !== undefined && linked.endsWith(".md")) {
          if (!anchorsOf(readFileSync(linked, "utf8")).has(anchor)) {
            problems.push(`${where}:${i + 1}: link to a missing heading: ${target}`);
          }
        }
      }
    });
}

const PATH = /^(?:src|test|bench|scripts|migrations|bin|docs)\/[\w./-]+$/;

function checkPaths(root, file, text, problems) {
  const where = path.relative(root, file);
  for (const { line, code } of codeOf(text)) {
    if (PATH.test(code) && !existsSync(path.join(root, code))) {
      problems.push(`${where}:${line}: \`${code}\` does not exist`);
    }
  }
}

function checkCommands(root, file, text, problems) {
  const where = path.relative(root, file);
  const scripts = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts ?? {};
  const subcommands = subcommandsOf(root);
  for (const { line, code } of codeOf(text)) {
    for (const m of code.matchAll(/\bnpm\s+(?:run(?:-script)?\s+([\w:.-]+)|(start|test)\b)/g)) {
      const name = m[1] ?? m[2];
      if (!Object.hasOwn(scripts, name)) {
        problems.push(`${where}:${line}: \`npm run ${name}\` is not a script of package.json`);
      }
    }
    // `warren WORD` where WORD could be a subcommand: lower-case letters, not a flag or a value.
    for (const m of code.matchAll(/(?:^|[\s/(|;&])warren\s+([a-z][a-z-]*)(?=$|[\s`|)\],;.])/g)) {
      if (!subcommands.has(m[1])) {
        problems.push(
          `${where}:${line}: \`warren ${m[1]}\` is not a subcommand (src/cli/commands.ts)`,
        );
      }
    }
  }
}

/** Every problem of the docs under `root`, one line each; empty when all is well. */
export function checkDocs(root = repoRoot) {
  const problems = [];
  const readme = path.join(root, "README.md");
  const docsDir = path.join(root, "docs");
  const files = [readme, path.join(root, "CHANGELOG.md")].filter((f) => existsSync(f));
  if (existsSync(docsDir)) {
    for (const name of readdirSync(docsDir).sort()) {
      if (name.endsWith(".md")) files.push(path.join(docsDir, name));
    }
  }
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    checkLinks(root, file, text, problems);
    checkPaths(root, file, text, problems);
    if (file === readme) checkCommands(root, file, text, problems);
  }
  return problems;
}

function main(argv) {
  const at = argv.indexOf("--root");
  const root = at >= 0 && argv[at + 1] ? path.resolve(argv[at + 1]) : repoRoot;
  let problems;
  try {
    problems = checkDocs(root);
  } catch (error) {
    process.stderr.write(`check-docs: ${error instanceof Error ? error.message : error}\n`);
    return 2;
  }
  for (const problem of problems) process.stderr.write(`check-docs: ${problem}\n`);
  return problems.length > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
