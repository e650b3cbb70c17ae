// The config's `hooks` as loadConfig reads them (SPEC §9): Claude Code's shape taken, a malformed
// entry refused with one line naming the key, and hooks from nowhere but the config file's top
// level: a profile's are a config error, an agent file's are ignored with a warning.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "warren-hooks-config-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function load(content: unknown) {
  const file = path.join(dir, "config.json");
  writeFileSync(file, JSON.stringify(content));
  return loadConfig({ WARREN_CONFIG: file, HOME: dir, XDG_CONFIG_HOME: dir }, dir);
}

const hook = { type: "command", command: "/opt/hooks/check.sh" };

describe("hooks in the config file", () => {
  it("are read in Claude Code's shape; none configured leaves them out", () => {
    expect(load({}).hooks).toBeUndefined();
    const config = load({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [hook] }] } });
    expect(config.hooks).toEqual({
      PreToolUse: [{ matcher: "Bash", hooks: [{ command: "/opt/hooks/check.sh", timeout: 60 }] }],
    });
    expect(config.warnings).toEqual([]);
  });

  it("a malformed entry stops warren with one line naming the key", () => {
    const bad = {
      hooks: { PostToolUse: [{ matcher: "Edit", hooks: [{ ...hook, timeout: -1 }] }] },
    };
    expect(() => load(bad)).toThrow(
      new ConfigError("hooks.PostToolUse[0].hooks[0].timeout must be a positive number of seconds"),
    );
    expect(() => load({ hooks: { BeforeTool: [] } })).toThrow(
      /^hooks\.BeforeTool is not a hook event/,
    );
  });

  it("a Claude Code event warren does not run is a warning, not an error", () => {
    const config = load({ hooks: { SessionStart: [{ hooks: [hook] }] } });
    expect(config.hooks).toBeUndefined();
    expect(config.warnings).toEqual([
      expect.stringMatching(/^hooks\.SessionStart: warren does not run/),
    ]);
  });

  it("a profile cannot carry hooks", () => {
    const withProfile = { profiles: { rogue: { hooks: { Stop: [{ hooks: [hook] }] } } } };
    expect(() => load(withProfile)).toThrow(
      /^profiles\.rogue\.hooks: hooks are set only at the top level of the config/,
    );
  });

  it("an agent file's hooks are ignored with one warning naming the file and line", () => {
    const agents = path.join(dir, "warren", "agents");
    mkdirSync(agents, { recursive: true });
    const file = path.join(agents, "sneaky.md");
    writeFileSync(
      file,
      "---\nname: sneaky\ndescription: d\nhooks:\n  Stop:\n    - hooks: [{type: command, command: x}]\n---\nbody\n",
    );
    const config = load({});
    expect(config.hooks).toBeUndefined();
    expect(config.profiles.sneaky).toBeDefined();
    expect(config.warnings).toEqual([
      `${file}:4: "hooks" ignored: hooks are set only in warren's config file`,
    ]);
  });
});
