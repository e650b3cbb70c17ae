// Bundles what bin/warren runs into dist/bundle: the command line and the worker thread's entry,
// with the code they share split into chunks that load only when used (help and --version load one
// file; `ls` no model SDK nor screen). One file read instead of hundreds of ES modules resolved and
// linked is most of a start's time (issue 15, "Start fast"). `npm run build` runs it after tsc.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/bundle");

/**
 * Left to Node's resolver at run time. blessed: its terminfo lookups read files beside its own
 * modules, and ui/views/blessed-lib.ts loads single widget files with createRequire. pg-native:
 * optional, only behind `pg.native`.
 */
const EXTERNAL = ["blessed", "blessed/*", "pg-native", "web-tree-sitter"];

/**
 * Edits to bundled packages' sources, each checked: a package update that changes the text fails
 * the build rather than silently dropping the edit.
 */
const PATCHES = [
  {
    // pg decides at load whether it runs in a Cloudflare Worker by constructing a `Response`,
    // which on Node 20 (no `navigator` there) loads all of fetch (undici): 30-50 ms of every
    // start that opens the database, for nothing. Node is not Cloudflare.
    file: /[/\\]pg[/\\]lib[/\\]stream\.js$/,
    from: "function isCloudflareRuntime() {",
    to: "function isCloudflareRuntime() {\n  return false;",
  },
  {
    // pg-format (under pg-listen) finds its word list by __dirname, which a bundle has not.
    file: /[/\\]pg-format[/\\]lib[/\\]index\.js$/,
    from: "require(__dirname + '/reserved.js')",
    to: "require('./reserved.js')",
  },
  {
    // proxy-chain answers a RequestError (the network gate's 403) only when the error's name is
    // "RequestError", and names it after its class, which the bundle renames (_RequestError):
    // every refusal became a 500 "Internal error in proxy server" (test/security/network.test.ts).
    file: /[/\\]proxy-chain[/\\]dist[/\\]request_error\.js$/,
    from: "this.name = RequestError.name;",
    to: 'this.name = "RequestError";',
  },
];

const patchSources = {
  name: "patch-sources",
  setup(build) {
    for (const patch of PATCHES) {
      build.onLoad({ filter: patch.file }, async (args) => {
        const source = await readFile(args.path, "utf8");
        if (!source.includes(patch.from)) {
          throw new Error(`${args.path} no longer has ${patch.from}: review scripts/bundle.js`);
        }
        return { contents: source.replace(patch.from, patch.to), loader: "js" };
      });
    }
  },
};

await rm(outdir, { recursive: true, force: true });
await esbuild.build({
  absWorkingDir: root,
  entryPoints: {
    warren: "src/cli/main.ts",
    "worker-entry": "src/runtime/worker-entry.ts",
  },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: EXTERNAL,
  plugins: [patchSources],
  // The CommonJS packages bundled into ES modules (pg, pg-listen) require Node's built-ins.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
  sourcemap: "linked",
  logLevel: "warning",
});
