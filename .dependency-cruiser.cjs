/* global module */
// The layer order of src/, checked by dependency-cruiser (`npm run check` runs it through
// scripts/check-layers.js; on Node 22 or later `npx depcruise src` reads this file too).
//
// Folders from top to bottom: each may import only the folders below it, never one above, so no
// two folders can import each other, directly or around a loop. docs/architecture.md draws the
// same list (scripts/check-docs.js compares the two). Type-only imports count
// (tsPreCompilationDeps): a type two folders share belongs in the lower one.
//
// The one exception: src/db/schema.ts gathers every folder's `*.sql.ts` table for drizzle (the
// migrations and the typed queries), as opencode keeps each table beside its feature.

/** @type {[string, string][]} [folder, what it is]; top first. "." is src/'s own files. */
const LAYERS = [
  ["cli", "the command line: `warren`, `-p`, `ls`, `log`, `worker`, `doctor`; starts the TUI"],
  ["ui", "the TUI: pure views of the feed, keys as data, blessed placing lines"],
  ["runtime", "the turn loop, the tool-call path, scheduling, leases, worker threads, health"],
  ["approvals", "a person's answers to `ask` decisions, waited on like mail"],
  ["config", "loads and composes the settings (types live with their owners below)"],
  ["hooks", "the person's hooks: parsed, trusted, run confined"],
  ["mcp", "MCP servers: configuration, connections, their tools"],
  ["tools", "what an agent can call, one file per tool"],
  ["tasks", "the task board of a tree"],
  ["search", "search across a tree's events"],
  ["skills", "the person's skills and command files (SKILL.md, commands/*.md), read from disk"],
  ["feed", "NOTIFY hints of one tree turned into typed updates for any subscriber"],
  ["mail", "send and wait: mailboxes, hand-offs, waits"],
  ["agents", "the tree: rows, fork/kill/reap, capabilities, profiles, worktrees"],
  ["sandbox", "running one confined command: bubblewrap, the warm pool, the environment, network"],
  ["policy", "decisions, pure: parse a call, match the rules, allow / ask / deny"],
  ["bus", "LISTEN/NOTIFY: one listener per thread, channels"],
  ["llm", "the model adapter (OpenAI-compatible streaming), knows no database"],
  ["db", "the pool, the embedded server, migrations, retries"],
  ["telemetry", "OpenTelemetry, off unless configured: settings, the lazily loaded SDK, spans"],
  ["text", "text helpers: escaping, formatting, diffs"],
  [".", "src/*.ts: paths (config, home, XDG, repository root), the package root, derived caches"],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The path pattern of a layer: its folder, or src/'s own files for ".". */
const pattern = (folder) => (folder === "." ? "^src/[^/]+$" : `^src/${escape(folder)}/`);
const SCHEMA = "^src/db/schema\\.ts$";

const layerRules = LAYERS.map(([folder], index) => ({
  name: `layer-${folder === "." ? "src-root" : folder}`,
  severity: "error",
  comment:
    `src/${folder === "." ? "*.ts" : folder + "/"} may import only the layers below it: ` +
    (LAYERS.slice(index + 1)
      .map(([f]) => (f === "." ? "src/*.ts" : f))
      .join(", ") || "nothing in src/"),
  from: { path: pattern(folder), ...(folder === "db" ? { pathNot: SCHEMA } : {}) },
  // The top layer has nothing above it: its rule matches no path (kept, so that the rules list
  // every layer in order for scripts/check-docs.js).
  to: {
    path:
      index === 0
        ? "^$"
        : LAYERS.slice(0, index)
            .map(([f]) => pattern(f))
            .join("|"),
  },
}));

const placed = LAYERS.map(([f]) => pattern(f)).join("|");

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "schema-gathers-tables",
      severity: "error",
      comment: "src/db/schema.ts may reach above db/ only for the *.sql.ts tables it gathers",
      from: { path: SCHEMA },
      to: { path: "^src/", pathNot: `\\.sql\\.ts$|${pattern("db")}|${pattern(".")}` },
    },
    {
      name: "layer-unplaced",
      severity: "error",
      comment: "every folder of src/ has its place in LAYERS (.dependency-cruiser.cjs)",
      from: { path: "^src/", pathNot: placed },
      to: {},
    },
    {
      name: "layer-unplaced-target",
      severity: "error",
      comment: "every folder of src/ has its place in LAYERS (.dependency-cruiser.cjs)",
      from: { path: "^src/" },
      to: { path: "^src/", pathNot: placed },
    },
    {
      name: "no-circular",
      severity: "error",
      comment: "modules of src/ import each other in a circle: what both need belongs below both",
      from: { path: "^src/" },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    moduleSystems: ["es6", "cjs"],
  },
};
