// Agent files as profiles (SPEC section 9): Markdown files with YAML front matter (`name`,
// `description`, `tools`, `model`, and warren's `budget`, `policy`, `isolation`, `file_access`,
// `sandbox_network`, `output_schema`);
// the body is the profile's system prompt. Read from, in order of precedence when names clash
// (after the config's own `profiles`, which win over all of them):
//   1. <config dir>/agents/*.md        2. ~/.claude/agents/*.md
//   3. <project>/.warren/agents/*.md   4. <project>/.claude/agents/*.md
// where <project> is the git repository root of the working directory (else the directory
// itself): the person's own files come first, so a project's file (which an agent may have
// written) never shadows one of theirs; the shadowed project file is one warning line. Each file
// is used as the person accepted it (accepted-files.ts): a changed one is read in its accepted
// form (a new one not at all) and listed in `changes`. A file that cannot be used is one warning
// line naming the file and line, never a crash.
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import type * as Yaml from "yaml";
import type { Budget } from "../agents/agents.sql.js";
import { validatePolicy } from "../policy/policy.js";
import { readText, viewOf, type FileChange } from "./accepted-files.js";
import { parseNetworkSetting } from "../sandbox/network/rules.js";
import { compileOutputSchema, typeName } from "../text/json-schema.js";
import type { Profile } from "../agents/profile.js";
import { repositoryRoot, warrenConfigDir } from "../paths.js";

type Env = Record<string, string | undefined>;

/**
 * The YAML parser, loaded when an agent file is read: it is ~290 KB of code that every start
 * (the config is read by every command) would otherwise load for nothing. Required, since
 * loadConfig is synchronous; bundled code finds it in node_modules (a dependency).
 */
let yaml: typeof Yaml | undefined;
const loadYaml = () => (yaml ??= createRequire(import.meta.url)("yaml") as typeof Yaml);

/** Claude Code's tool names → warren's. warren's own names are taken as they are. */
const CLAUDE_TOOLS: Record<string, string> = {
  Read: "read_file",
  Write: "write_file",
  Edit: "edit_file",
  MultiEdit: "edit_file",
  Bash: "bash",
  Glob: "glob",
  Grep: "grep",
  Task: "fork",
  Skill: "skill",
};
const WARREN_TOOLS = new Set([
  "bash",
  "edit_file",
  "fork",
  "glob",
  "grep",
  "kill",
  "read_file",
  "send",
  "skill",
  "wait",
  "write_file",
]);
/** Always offered to an agent-file profile's agents, so a child can report. */
const ALWAYS = ["send", "wait"];
const BUDGET_KEYS = ["turns", "tool_calls", "tokens", "wall_seconds", "usd"] as const;
const FIELDS = new Set([
  "name",
  "description",
  "tools",
  "model",
  "budget",
  "policy",
  "isolation",
  "file_access",
  "sandbox_network",
  "output_schema",
  // Claude Code's own fields that warren does not use: accepted without a warning.
  "color",
]);

export interface AgentFileSource {
  /** Where the files are, and how the source is named in messages. */
  dir: string;
  label: string;
  /** The person's own folder (their config directory, ~/.claude), not the project's. */
  own: boolean;
}

export interface AgentFiles {
  profiles: Record<string, Profile>;
  /** Which file each profile came from. */
  files: Record<string, string>;
  /** One line each: `FILE:LINE: what is wrong`. */
  warnings: string[];
  /** Files that differ from what the person accepted (read in their accepted form, if any). */
  changes: FileChange[];
}

/** The folders agent files are read from, highest precedence first. */
export function agentFileSources(cwd: string, env: Env = process.env): AgentFileSource[] {
  const project = repositoryRoot(cwd) ?? path.resolve(cwd);
  const home = env.HOME || os.homedir();
  return [
    { dir: path.join(warrenConfigDir(env), "agents"), label: "user warren", own: true },
    { dir: path.join(home, ".claude", "agents"), label: "user .claude", own: true },
    { dir: path.join(project, ".warren", "agents"), label: "project .warren", own: false },
    { dir: path.join(project, ".claude", "agents"), label: "project .claude", own: false },
  ];
}

/**
 * Every agent file's profile. `taken`: names already defined (the config's profiles), which
 * win: a file with such a name is skipped, as is one whose name a higher source already has.
 */
export function loadAgentFiles(
  cwd: string,
  env: Env = process.env,
  taken: ReadonlySet<string> = new Set(),
): AgentFiles {
  const out: AgentFiles = { profiles: {}, files: {}, warnings: [], changes: [] };
  const seen = new Set<string>();
  const ownNames = new Set<string>();
  for (const source of agentFileSources(cwd, env)) {
    for (const file of agentFilesIn(source.dir)) {
      if (seen.has(file)) continue; // the same folder reached twice (e.g. HOME is the project)
      seen.add(file);
      const view = viewOf(file, readText(file), "agent", env);
      if (view.change) out.changes.push(view.change);
      if (view.use === null) continue;
      const parsed = parseAgentText(file, view.use, out.warnings);
      if (!parsed) continue;
      if (!source.own && ownNames.has(parsed.name)) {
        out.warnings.push(
          `${file}:1: shadowed by your own agent file ${out.files[parsed.name] ?? parsed.name} of the same name; not used`,
        );
        continue;
      }
      if (source.own) ownNames.add(parsed.name);
      if (taken.has(parsed.name) || out.profiles[parsed.name]) continue;
      out.profiles[parsed.name] = parsed.profile;
      out.files[parsed.name] = file;
    }
  }
  return out;
}

/** The `.md` files of a folder, sorted (none when it cannot be read). */
export function agentFilesIn(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((n) => n.endsWith(".md"))
      .sort()
      .map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/** One file → its profile, or undefined after one warning in `warnings`. */
export function parseAgentFile(
  file: string,
  warnings: string[],
): { name: string; profile: Profile } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    warnings.push(`${file}:1: cannot read: ${(err as NodeJS.ErrnoException).code ?? "error"}`);
    return undefined;
  }
  return parseAgentText(file, text, warnings);
}

/** An agent file's text (read from `file`) → its profile, or undefined after one warning. */
export function parseAgentText(
  file: string,
  raw: string,
  warnings: string[],
): { name: string; profile: Profile } | undefined {
  const text = raw.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const warn = (line: number, message: string) => {
    warnings.push(`${file}:${line}: ${message}`);
    return undefined;
  };
  const open = /^---[ \t]*\n/.exec(text);
  if (!open) return warn(1, "no front matter: an agent file starts with a --- line");
  const close = /^---[ \t]*$/m.exec(text.slice(open[0].length));
  if (!close) return warn(1, "the front matter has no closing --- line");
  const yamlText = text.slice(open[0].length, open[0].length + close.index);
  const body = text.slice(open[0].length + close.index + close[0].length).replace(/^\n/, "");
  // Line numbers in the file: the front matter starts on line 2.
  const { LineCounter, parseDocument, isMap, isScalar } = loadYaml();
  const lines = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    const error = doc.errors[0]!;
    const line = lines.linePos(error.pos[0]).line + 1;
    return warn(line, `invalid front matter: ${error.message.split("\n")[0]}`);
  }
  const lineOf = (pair: Yaml.Pair | undefined): number => {
    const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
    return range ? lines.linePos(range[0]).line + 1 : 2;
  };
  if (!isMap(doc.contents)) return warn(2, "the front matter must be a YAML mapping of fields");
  const pairs = new Map<string, Yaml.Pair>();
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    pairs.set(key, pair);
  }
  const data = doc.toJS() as Record<string, unknown>;
  for (const key of Object.keys(data)) {
    if (key === "hooks") {
      // Claude Code lets an agent file carry hooks; warren runs only the person's config's.
      warn(lineOf(pairs.get(key)), `"hooks" ignored: hooks are set only in warren's config file`);
    } else if (!FIELDS.has(key)) warn(lineOf(pairs.get(key)), `unknown field "${key}" ignored`);
  }
  const at = (key: string) => lineOf(pairs.get(key));
  const str = (key: string): string | undefined | null => {
    const v = data[key];
    if (v === undefined || v === null) return undefined;
    return typeof v === "string" && v.trim() ? v.trim() : null;
  };

  const name = str("name") ?? path.basename(file, ".md");
  if (name === null) return warn(at("name"), '"name" must be a non-empty string');
  const description = str("description");
  if (description === null) return warn(at("description"), '"description" must be a string');
  const model = str("model");
  if (model === null) return warn(at("model"), '"model" must be a string');
  const profile: Profile = {};
  if (body.trim()) profile.system_prompt = body.trimEnd();
  if (description) profile.description = description;
  // Claude Code's "inherit" means the parent's model: warren's default for a child too.
  if (model && model !== "inherit") profile.model = model;

  if (data.tools !== undefined && data.tools !== null) {
    const listed =
      typeof data.tools === "string"
        ? data.tools.split(",")
        : Array.isArray(data.tools) && data.tools.every((t) => typeof t === "string")
          ? (data.tools as string[])
          : undefined;
    if (!listed) return warn(at("tools"), '"tools" must be a comma-separated string or a list');
    const tools = new Set<string>();
    for (const raw of listed.map((t) => t.trim()).filter(Boolean)) {
      const mapped =
        CLAUDE_TOOLS[raw] ??
        (WARREN_TOOLS.has(raw) || /^mcp__[\w-]+__[\w*-]+$/.test(raw) ? raw : undefined);
      if (mapped) tools.add(mapped);
      else warnings.push(`${file}:${at("tools")}: tool "${raw}" is not one warren has; ignored`);
    }
    for (const t of ALWAYS) tools.add(t);
    profile.tools = [...tools].sort();
  }

  if (data.budget !== undefined) {
    const budget = data.budget;
    if (!budget || typeof budget !== "object" || Array.isArray(budget)) {
      return warn(at("budget"), `"budget" must be a mapping of ${BUDGET_KEYS.join(", ")}`);
    }
    const out: Budget = {};
    for (const [key, value] of Object.entries(budget as Record<string, unknown>)) {
      if (!(BUDGET_KEYS as readonly string[]).includes(key)) {
        return warn(
          at("budget"),
          `unknown budget field "${key}"; expected ${BUDGET_KEYS.join(", ")}`,
        );
      }
      const ok =
        typeof value === "number" &&
        value > 0 &&
        Number.isFinite(value) &&
        (key === "usd" || Number.isInteger(value));
      if (!ok) return warn(at("budget"), `budget.${key} must be a positive number`);
      out[key as keyof Budget] = value;
    }
    profile.budget = out;
  }
  if (data.policy !== undefined) {
    try {
      const policy = validatePolicy(data.policy, "policy");
      if (policy) profile.policy = policy;
    } catch (err) {
      return warn(at("policy"), (err as Error).message);
    }
  }
  if (data.file_access !== undefined) {
    if (data.file_access !== "cwd" && data.file_access !== "any") {
      return warn(at("file_access"), '"file_access" must be "cwd" or "any"');
    }
    profile.file_access = data.file_access;
  }
  if (data.sandbox_network !== undefined) {
    try {
      profile.sandbox_network = parseNetworkSetting(data.sandbox_network, "sandbox_network");
    } catch (err) {
      return warn(at("sandbox_network"), (err as Error).message);
    }
  }
  if (data.isolation !== undefined) {
    if (data.isolation !== "worktree") {
      return warn(at("isolation"), '"isolation" must be "worktree"');
    }
    profile.isolation = "worktree";
  }
  if (data.output_schema !== undefined && data.output_schema !== null) {
    // A schema ajv refuses costs the file its schema, not its profile: one warning line.
    const schema = data.output_schema;
    if (typeof schema !== "object" || Array.isArray(schema)) {
      const got = typeName(schema);
      warn(at("output_schema"), `"output_schema" must be a mapping (a JSON Schema), got ${got}`);
    } else {
      const compiled = compileOutputSchema(schema);
      if (compiled.ok) profile.output_schema = schema as Record<string, unknown>;
      else warn(at("output_schema"), `"output_schema": ${compiled.error}; not used`);
    }
  }
  return { name, profile };
}
