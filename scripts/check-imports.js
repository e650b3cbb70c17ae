// Fails when the modules of src/ import each other in a circle (type-only imports included: a
// contract two modules share belongs below both), or when a layer reaches up into one it must not
// know. `npm run check` runs it.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const src = path.join(root, "src");

async function sources(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(full)));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

// `import … from "./x.js"`, `export … from "./x.js"`, `import("./x.js")`: relative specifiers only.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;

/** [importer's folder, folder it must not import]: a tool is below the runtime that runs it; the
 * database layer does not know the config's room. */
const FORBIDDEN = [
  ["tools", "runtime"],
  ["db", "config"],
];

async function graph() {
  const files = await sources(src);
  const known = new Set(files);
  const edges = new Map();
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const targets = new Set();
    for (const match of text.matchAll(SPECIFIER)) {
      const target = path.resolve(path.dirname(file), match[1]).replace(/\.js$/, ".ts");
      if (known.has(target)) targets.add(target);
    }
    edges.set(file, [...targets].sort());
  }
  return edges;
}

/** Every circle, once each (Tarjan's strongly connected components of more than one module). */
function circles(edges) {
  let index = 0;
  const order = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    order.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), order.get(next)));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = (edges.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!order.has(node)) visit(node);
  return found;
}

const folder = (file) => path.relative(src, file).split(path.sep)[0];
const edges = await graph();
const problems = circles(edges).map(
  (component) =>
    `import circle in src/: ${component.map((f) => path.relative(src, f)).join(" ↔ ")}`,
);
for (const [file, targets] of edges) {
  for (const target of targets) {
    if (FORBIDDEN.some(([from, to]) => folder(file) === from && folder(target) === to)) {
      problems.push(`src/${path.relative(src, file)} imports src/${path.relative(src, target)}`);
    }
  }
}
if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exit(1);
}
