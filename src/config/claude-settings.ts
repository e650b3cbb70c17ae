// Claude Code's settings files (SPEC §9): `~/.claude/settings.json` (the person's own), and the
// project's `.claude/settings.json` and `.claude/settings.local.json` (the nearest `.claude/`
// holding one, from the working directory up to the repository root). Read: `permissions.allow|
// ask|deny` (policy/claude-rules.ts), `env` (bash's environment, as `shell_env.set`), `hooks`
// (hooks/config.ts's shape). A cloned repository is not trusted: a project file's allow rules,
// `env` and `hooks` apply only once the person trusted that file as it is now (trust.ts); its deny
// and ask rules apply at once. A broken file or entry is one warning, never a config error.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { validateHooks, type HooksConfig } from "../hooks/config.js";
import { parseClaudeRule, type RuleBase, type SettingsRule } from "../policy/claude-rules.js";
import type { Verdict } from "../policy/types.js";
import { repositoryRoot } from "../paths.js";
import { trustGate, isTrusted, type TrustGate } from "./trust.js";

type Env = Record<string, string | undefined>;

export const SETTINGS_FILES = ["settings.json", "settings.local.json"] as const;

/** One settings file as warren read it. */
export interface SettingsFileState {
  file: string;
  scope: "user" | "project";
  /**
   * read: applied whole (the person's own, or trusted, or nothing in it waits); waiting: its
   * allow rules, env and hooks wait for `warren trust` (its deny and ask apply); broken: not used.
   */
  state: "read" | "waiting" | "broken";
  /** What in it needs trust (`2 allow rules`, `env`, `hooks`); empty: nothing. */
  widens: string[];
  /** A project file's trust key (path and content); undefined for the person's own. */
  gate?: TrustGate;
}

export interface ClaudeSettings {
  files: SettingsFileState[];
  /** Rules to apply: every deny and ask, and the allow of trusted (or user) files. */
  rules: SettingsRule[];
  /** The allow rules of project files waiting for trust (not applied; shown by `warren trust`). */
  waitingRules: SettingsRule[];
  /** `env` of the applied files (the project's over the person's). */
  env: Record<string, string>;
  /** `hooks` of the applied files, one config each (merged by mergeHooks). */
  hooks: HooksConfig[];
  warnings: string[];
}

/** The project's `.claude/` folder: the nearest holding a settings file, up to the repository root. */
export function findProjectClaudeDir(cwd: string, home: string): string | undefined {
  const leaf = path.resolve(cwd);
  const top = repositoryRoot(leaf) ?? leaf;
  const own = path.resolve(home, ".claude");
  for (let dir = leaf; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, ".claude");
    if (candidate !== own && SETTINGS_FILES.some((f) => fs.existsSync(path.join(candidate, f)))) {
      return candidate;
    }
    if (dir === top || path.dirname(dir) === dir) return undefined;
  }
}

/** The settings files warren reads from `cwd`: the person's own first, then the project's. */
export function settingsFiles(
  cwd: string,
  env: Env,
): { file: string; scope: "user" | "project"; root: string }[] {
  const home = env.HOME || os.homedir();
  const out: { file: string; scope: "user" | "project"; root: string }[] = [];
  const user = path.join(home, ".claude", "settings.json");
  if (fs.existsSync(user)) out.push({ file: user, scope: "user", root: home });
  const dir = findProjectClaudeDir(cwd, home);
  for (const name of SETTINGS_FILES) {
    const file = dir && path.join(dir, name);
    if (file && fs.existsSync(file)) out.push({ file, scope: "project", root: path.dirname(dir) });
  }
  return out;
}

/** Reads every settings file found from `cwd`, each gated by trust as its scope says. */
export function loadClaudeSettings(cwd: string, env: Env): ClaudeSettings {
  const out: ClaudeSettings = {
    files: [],
    rules: [],
    waitingRules: [],
    env: {},
    hooks: [],
    warnings: [],
  };
  const home = env.HOME || os.homedir();
  for (const { file, scope, root } of settingsFiles(cwd, env)) {
    readOne(file, scope, { root, cwd: path.resolve(cwd), home }, env, out);
  }
  return out;
}

function readOne(
  file: string,
  scope: "user" | "project",
  base: RuleBase,
  env: Env,
  out: ClaudeSettings,
): void {
  let content: string;
  let parsed: unknown;
  try {
    content = fs.readFileSync(file, "utf8");
    parsed = JSON.parse(content);
  } catch (err) {
    out.warnings.push(`${file} is not used: ${(err as Error).message.split("\n")[0]}`);
    out.files.push({ file, scope, state: "broken", widens: [] });
    return;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    out.warnings.push(`${file} is not used: it must hold a JSON object`);
    out.files.push({ file, scope, state: "broken", widens: [] });
    return;
  }
  const data = parsed as Record<string, unknown>;
  const rules: SettingsRule[] = [];
  const permissions = data.permissions;
  if (permissions !== undefined) {
    if (!permissions || typeof permissions !== "object" || Array.isArray(permissions)) {
      out.warnings.push(`${file}: "permissions" must be an object; none of its rules apply`);
    } else {
      const p = permissions as Record<string, unknown>;
      for (const verdict of ["deny", "ask", "allow"] as const) {
        rules.push(...readRules(p[verdict], verdict, file, base, out.warnings));
      }
      for (const key of ["defaultMode", "additionalDirectories"]) {
        if (p[key] !== undefined) {
          out.warnings.push(`${file}: permissions.${key} is not applied (warren has no such mode)`);
        }
      }
    }
  }
  const vars = readEnv(data.env, file, out.warnings);
  let hooks: HooksConfig | undefined;
  if (data.hooks !== undefined) {
    try {
      const checked = validateHooks(data.hooks, `${file}: hooks`);
      out.warnings.push(...checked.warnings);
      if (Object.keys(checked.hooks).length > 0) hooks = checked.hooks;
    } catch (err) {
      out.warnings.push(`${(err as Error).message} (none of its hooks are used)`);
    }
  }
  const allows = rules.filter((r) => r.verdict === "allow").length;
  const widens = [
    ...(allows > 0 ? [`${allows} allow rule${allows === 1 ? "" : "s"}`] : []),
    ...(Object.keys(vars).length > 0 ? ["env"] : []),
    ...(hooks ? ["hooks"] : []),
  ];
  const gate = scope === "project" ? trustGate(file, content, env) : undefined;
  const applied = !gate || widens.length === 0 || isTrusted(gate);
  out.files.push({
    file,
    scope,
    state: applied ? "read" : "waiting",
    widens,
    ...(gate && { gate }),
  });
  // Denies and asks apply at once, whoever wrote them; the rest only when applied.
  out.rules.push(...rules.filter((r) => applied || r.verdict !== "allow"));
  if (!applied) {
    out.waitingRules.push(...rules.filter((r) => r.verdict === "allow"));
    return;
  }
  Object.assign(out.env, vars);
  if (hooks) out.hooks.push(hooks);
}

function readRules(
  value: unknown,
  verdict: Verdict,
  file: string,
  base: RuleBase,
  warnings: string[],
): SettingsRule[] {
  if (value === undefined || value === null) return [];
  const source = `${file} permissions.${verdict}`;
  if (!Array.isArray(value)) {
    warnings.push(`${source} must be a list of rules; none of them apply`);
    return [];
  }
  const rules: SettingsRule[] = [];
  for (const text of value) {
    const rule = parseClaudeRule(text, verdict, source, base);
    if ("warning" in rule) warnings.push(rule.warning);
    else rules.push(rule);
  }
  return rules;
}

function readEnv(value: unknown, file: string, warnings: string[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    warnings.push(`${file}: "env" must be an object of {"NAME": "value"}; not used`);
    return {};
  }
  const vars: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      warnings.push(`${file}: env ${JSON.stringify(name)} is not a variable name; not used`);
    } else if (typeof v === "string") vars[name] = v;
    else if (typeof v === "number" || typeof v === "boolean") vars[name] = String(v);
    else warnings.push(`${file}: env.${name} must be a string; not used`);
  }
  return vars;
}

/** The config's hooks, then each settings file's, per event in that order. */
export function mergeHooks(own: HooksConfig, more: readonly HooksConfig[]): HooksConfig {
  const merged: HooksConfig = { ...own };
  for (const hooks of more) {
    for (const [event, groups] of Object.entries(hooks) as [
      keyof HooksConfig,
      HooksConfig[keyof HooksConfig],
    ][]) {
      merged[event] = [...(merged[event] ?? []), ...(groups ?? [])];
    }
  }
  return merged;
}

/**
 * What the person is shown about the settings files (first screen, `warren doctor`): one line per
 * file read or waiting. Warnings are separate (config.warnings).
 */
export function settingsLines(settings: ClaudeSettings | undefined): string[] {
  if (!settings) return [];
  return settings.files.map((f) => {
    const rules = settings.rules.filter((r) => r.source.startsWith(`${f.file} `)).length;
    const what = `${rules} rule${rules === 1 ? "" : "s"}${f.widens.some((w) => w === "env") ? ", env" : ""}${f.widens.includes("hooks") ? ", hooks" : ""}`;
    if (f.state === "broken") return `${f.file}: not used (see its warning)`;
    if (f.state === "waiting") {
      return `${f.file}: its deny and ask rules apply; ${f.widens.join(", ")} wait for \`warren trust\``;
    }
    return `${f.file}: read (${what})`;
  });
}

/**
 * One line naming the project settings files whose allow rules, env or hooks wait for the
 * person's trust (`how`: how to trust where the line is shown); undefined when none waits.
 */
export function settingsWaitingLine(
  settings: ClaudeSettings | undefined,
  how = "`warren trust`",
): string | undefined {
  const waiting = settings?.files.filter((f) => f.state === "waiting") ?? [];
  if (waiting.length === 0) return undefined;
  const named = waiting.map((f) => `${f.file} (${f.widens.join(", ")})`).join(", ");
  return `waiting for ${how}: ${named}; their deny and ask rules apply now`;
}
