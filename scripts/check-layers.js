// The layer check (`npm run check` runs it): dependency-cruiser with the rules of
// .dependency-cruiser.cjs fails on an import in src/ that goes up the layer order or on modules
// importing each other in a circle, one line per offending import; and the picture in
// docs/architecture.md ("## Layers") must list the same folders in the same order.
// Run through dependency-cruiser's API because its command line refuses Node 20, which warren
// supports (package.json "engines").
import { readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { cruise } from "dependency-cruiser";
import extractDepcruiseConfig from "dependency-cruiser/config-utl/extract-depcruise-config";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

process.chdir(path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."));
const ruleSet = await extractDepcruiseConfig("./.dependency-cruiser.cjs");
const problems = [];

const result = await cruise(["src"], { ruleSet, validate: true }, undefined, {
  tsConfig: extractTSConfig(ruleSet.options.tsConfig.fileName),
});
for (const v of result.output.summary.violations) {
  if (v.rule.severity !== "error") continue;
  const where = v.cycle
    ? [v.from, ...v.cycle.map((step) => step.name)].join(" → ")
    : `${v.from} → ${v.to}`;
  const rule = ruleSet.forbidden.find((r) => r.name === v.rule.name);
  problems.push(`${v.rule.name}: ${where} (${rule?.comment ?? ""})`);
}

// The order the rules hold: one `layer-FOLDER` rule per layer, top first ("src-root": src/*.ts).
const ordered = ruleSet.forbidden
  .map((r) => /^layer-(?!unplaced)(.+)$/.exec(r.name)?.[1])
  .filter(Boolean)
  .map((name) => (name === "src-root" ? "src/*.ts" : `${name}/`));
const doc = readFileSync("docs/architecture.md", "utf8");
const picture = /^## Layers\n[\s\S]*?^```\n([\s\S]*?)^```/m.exec(doc)?.[1];
const drawn = (picture ?? "")
  .split("\n")
  .filter((line) => line.trim())
  .map((line) => line.split(/\s+/)[0]);
if (drawn.join(" ") !== ordered.join(" ")) {
  problems.push(
    `docs/architecture.md's "## Layers" picture lists ${drawn.join(" ") || "nothing"}; ` +
      `.dependency-cruiser.cjs orders ${ordered.join(" ")}`,
  );
}

for (const problem of problems) process.stderr.write(`${problem}\n`);
if (problems.length > 0) process.exit(1);
