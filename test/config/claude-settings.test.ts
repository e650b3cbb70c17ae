// Claude Code's settings files read into the config: the person's own applies whole; a project's
// deny and ask apply at once, its allow rules, env and hooks only once the person trusted the file
// as it is (a changed file waits again). And Claude Code's model names through `model_aliases`.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { settingsLines, settingsWaitingLine } from "../../src/config/claude-settings.js";
import { revokeTrust, trustedEntries, trustFiles } from "../../src/config/trust.js";

function setup() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-settings-"));
  const home = path.join(dir, "home");
  const work = path.join(dir, "repo");
  mkdirSync(path.join(work, ".git"), { recursive: true });
  mkdirSync(path.join(home, ".claude"), { recursive: true });
  const env = {
    HOME: home,
    WARREN_HOME: path.join(dir, "warren-home"),
    WARREN_CONFIG: path.join(dir, "config.json"),
  };
  const write = (file: string, value: unknown) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
  };
  return { dir, home, work, env, write };
}

const hooks = (command: string) => ({
  PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }],
});

describe("Claude Code's settings files", () => {
  it("the person's own ~/.claude/settings.json applies whole: allow, deny, env, hooks", () => {
    const { home, work, env, write } = setup();
    write(path.join(home, ".claude", "settings.json"), {
      permissions: { allow: ["Bash(npm test:*)"], deny: ["Read(./.env)"] },
      env: { FROM_USER: "1" },
      hooks: hooks("echo user-hook"),
    });
    const config = loadConfig(env, work);
    expect(config.settingsRules?.map((r) => `${r.verdict} ${r.text}`).sort()).toEqual([
      "allow Bash(npm test:*)",
      "deny Read(./.env)",
    ]);
    expect(config.shellEnv.set).toEqual({ FROM_USER: "1" });
    expect(config.hooks?.PreToolUse?.[0]?.hooks[0]?.command).toBe("echo user-hook");
    expect(settingsWaitingLine(config.claudeSettings)).toBeUndefined();
    expect(settingsLines(config.claudeSettings)).toEqual([
      `${path.join(home, ".claude", "settings.json")}: read (2 rules, env, hooks)`,
    ]);
  });

  it("a project's files: deny and ask at once; allow, env and hooks wait for trust; a change waits again", () => {
    const { work, env, write } = setup();
    const file = path.join(work, ".claude", "settings.json");
    const settings = {
      permissions: {
        allow: ["Bash(make:*)"],
        ask: ["Bash(git push:*)"],
        deny: ["Bash(rm:*)"],
      },
      env: { FROM_PROJECT: "yes" },
      hooks: hooks("echo project-hook"),
    };
    write(file, settings);
    write(path.join(work, ".claude", "settings.local.json"), {
      permissions: { deny: ["Read(x)"] },
    });
    const sub = path.join(work, "a", "b");
    mkdirSync(sub, { recursive: true });
    let config = loadConfig(env, sub);
    const applied = () => config.settingsRules?.map((r) => `${r.verdict} ${r.text}`).sort();
    expect(applied()).toEqual(["ask Bash(git push:*)", "deny Bash(rm:*)", "deny Read(x)"]);
    expect(config.shellEnv.set).toEqual({});
    expect(config.hooks).toBeUndefined();
    const waiting = settingsWaitingLine(config.claudeSettings);
    expect(waiting).toBe(
      `waiting for \`warren trust\`: ${file} (1 allow rule, env, hooks); their deny and ask rules apply now`,
    );
    // The local file has nothing that widens: read, nothing waits.
    expect(config.claudeSettings?.files.map((f) => f.state)).toEqual(["waiting", "read"]);

    trustFiles([config.claudeSettings!.files[0]!.gate!]);
    config = loadConfig(env, sub);
    expect(applied()).toEqual([
      "allow Bash(make:*)",
      "ask Bash(git push:*)",
      "deny Bash(rm:*)",
      "deny Read(x)",
    ]);
    expect(config.shellEnv.set).toEqual({ FROM_PROJECT: "yes" });
    expect(config.hooks?.PreToolUse?.[0]?.hooks[0]?.command).toBe("echo project-hook");
    expect(settingsWaitingLine(config.claudeSettings)).toBeUndefined();
    expect(trustedEntries(env).map((e) => [e.file, e.kind])).toEqual([[file, "settings"]]);

    // Changed: waits again (its deny still applies).
    write(file, { ...settings, env: { FROM_PROJECT: "changed" } });
    config = loadConfig(env, sub);
    expect(applied()).toEqual(["ask Bash(git push:*)", "deny Bash(rm:*)", "deny Read(x)"]);
    expect(config.shellEnv.set).toEqual({});
    expect(settingsWaitingLine(config.claudeSettings)).toContain(file);

    // Back to the trusted content: trusted; revoked: waits.
    write(file, settings);
    expect(loadConfig(env, sub).shellEnv.set).toEqual({ FROM_PROJECT: "yes" });
    expect(revokeTrust(work, env)).toEqual([file]);
    expect(loadConfig(env, sub).shellEnv.set).toEqual({});
  });

  it("the config's own policy, shell_env and hooks stay; settings add to them", () => {
    const { home, work, env, write } = setup();
    write(env.WARREN_CONFIG, {
      shell_env: { set: { SHARED: "config" } },
      hooks: hooks("echo config-hook"),
    });
    write(path.join(home, ".claude", "settings.json"), {
      env: { SHARED: "settings", OTHER: "x" },
      hooks: hooks("echo user-hook"),
    });
    const config = loadConfig(env, work);
    expect(config.shellEnv.set).toEqual({ SHARED: "config", OTHER: "x" });
    expect(config.hooks?.PreToolUse?.map((g) => g.hooks[0]!.command)).toEqual([
      "echo config-hook",
      "echo user-hook",
    ]);
  });

  it("a broken file or entry is one warning naming it, never a config error", () => {
    const { home, work, env, write } = setup();
    write(path.join(work, ".claude", "settings.json"), "{ nope");
    write(path.join(home, ".claude", "settings.json"), {
      permissions: { deny: ["WebFetch(domain:evil.com)", "Bash(rm:*)"], defaultMode: "plan" },
      env: { OK: "1", BAD: { x: 1 } },
      hooks: { PreToolUse: "nope" },
    });
    const config = loadConfig(env, work);
    const warnings = config.warnings!.join("\n");
    expect(warnings).toContain(`${path.join(work, ".claude", "settings.json")} is not used`);
    expect(warnings).toContain(
      '"WebFetch(domain:evil.com)" is not applied: warren has no WebFetch tool',
    );
    expect(warnings).toContain("permissions.defaultMode is not applied");
    expect(warnings).toContain("env.BAD must be a string");
    expect(warnings).toContain("none of its hooks are used");
    expect(config.settingsRules?.map((r) => r.text)).toEqual(["Bash(rm:*)"]);
    expect(config.shellEnv.set).toEqual({ OK: "1" });
  });
});

describe("model_aliases", () => {
  const agent = (model: string) =>
    `---\nname: helper\ndescription: helps\nmodel: ${model}\n---\nHelp.\n`;

  it("maps Claude Code's names; an alias with no entry is dropped with one warning; inherit quietly", () => {
    const { work, env, write } = setup();
    const file = path.join(work, ".claude", "agents", "helper.md");
    write(file, agent("sonnet"));
    write(env.WARREN_CONFIG, { model_aliases: { sonnet: "gpt-4.1" } });
    expect(loadConfig(env, work).profiles.helper?.model).toBe("gpt-4.1");

    write(env.WARREN_CONFIG, {});
    let config = loadConfig(env, work);
    expect(config.profiles.helper).toBeDefined();
    expect(config.profiles.helper?.model).toBeUndefined();
    const lines = config.warnings!.filter((w) => w.includes('"sonnet"'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("model_aliases");
    expect(lines[0]).toContain(file);

    write(file, agent("haiku"));
    expect(loadConfig(env, work).profiles.helper?.model).toBeUndefined();
    write(file, agent("inherit"));
    config = loadConfig(env, work);
    expect(config.profiles.helper?.model).toBeUndefined();
    expect(config.warnings!.some((w) => w.includes("inherit"))).toBe(false);
    // A real model id passes as it is.
    write(file, agent("gpt-4.1-mini"));
    expect(loadConfig(env, work).profiles.helper?.model).toBe("gpt-4.1-mini");
  });

  it("a bad model_aliases is one config error", () => {
    const { work, env, write } = setup();
    write(env.WARREN_CONFIG, { model_aliases: { sonnet: 3 } });
    expect(() => loadConfig(env, work)).toThrow("model_aliases.sonnet must be a model name");
  });
});
