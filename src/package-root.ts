// Where warren's package sits (package.json, migrations/), found by walking up from this module:
// it runs as a TypeScript source (src), tsc's output (dist/src) or a chunk of the bundle
// (dist/bundle), each a different depth below the root. Below every layer that needs it (the
// command line's version, the database layer's migrations), so neither reaches into another's room.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface WarrenPackage {
  root: string;
  version: string;
}

let found: WarrenPackage | undefined;

/** The nearest directory above this module whose package.json is warren's. */
export function warrenPackage(): WarrenPackage {
  if (found) return found;
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const pkg = readPackageJson(path.join(dir, "package.json"));
    if (pkg?.name === "warren") {
      found = { root: dir, version: pkg.version ?? "unknown" };
      return found;
    }
    if (path.dirname(dir) === dir) throw new Error(`warren's package.json is not above ${start}`);
  }
}

function readPackageJson(file: string): { name?: string; version?: string } | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as { name?: string; version?: string };
  } catch {
    return undefined; // none here (or unreadable): look further up
  }
}
