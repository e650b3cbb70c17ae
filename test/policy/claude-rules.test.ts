// Claude Code's permission rules (settings.json) as warren applies them: each form of rule, the
// order (deny > ask > allow), and how they merge with warren's own policy (a deny wins from any
// source; an allow never widens what the config says).
import { beforeAll, describe, expect, it } from "vitest";
import {
  absoluteGlob,
  bashPattern,
  globCovers,
  parseClaudeRule,
  type RuleBase,
  type SettingsRule,
} from "../../src/policy/claude-rules.js";
import { decide, type Policy } from "../../src/policy/policy.js";
import { loadShellParser } from "../../src/policy/shell.js";

const base: RuleBase = { root: "/proj", cwd: "/proj/sub", home: "/home/me" };

function rules(list: Partial<Record<"allow" | "ask" | "deny", string[]>>): SettingsRule[] {
  const out: SettingsRule[] = [];
  for (const verdict of ["allow", "ask", "deny"] as const) {
    for (const text of list[verdict] ?? []) {
      const rule = parseClaudeRule(text, verdict, `s.json permissions.${verdict}`, base);
      if ("warning" in rule) throw new Error(rule.warning);
      out.push(rule);
    }
  }
  return out;
}

const bash = (command: string, settings: SettingsRule[], config?: Policy) =>
  decide(config, [], "bash", { command }, "/proj/sub", settings).verdict;
const tool = (name: string, args: unknown, settings: SettingsRule[], config?: Policy) =>
  decide(config, [], name, args, "/proj/sub", settings).verdict;

beforeAll(async () => {
  await loadShellParser();
});

describe("Claude Code's Bash rules", () => {
  it("reads `prefix:*` as the prefix on a word boundary, and `*` as any run", () => {
    expect(bashPattern("npm run test:*")).toBe("npm run test *");
    expect(bashPattern("rm:*")).toBe("rm *");
    expect(bashPattern("git diff *")).toBe("git diff *");
    expect(bashPattern("a:*b:*")).toBeUndefined();
  });

  it("a deny `Bash(rm:*)` denies rm in any form and any part of a line, not rmdir", () => {
    const s = rules({ deny: ["Bash(rm:*)"] });
    expect(bash("rm -f x", s)).toBe("deny");
    expect(bash("rm", s)).toBe("deny");
    expect(bash("ls && /bin/rm -rf y", s)).toBe("deny");
    expect(bash("rmdir x", s)).toBe("ask");
    // The config allowing bash outright does not lift it.
    expect(bash("rm -f x", s, { bash: "allow" })).toBe("deny");
  });

  it("an allow covers a line only when every command matches; it stands in for the default", () => {
    const s = rules({ allow: ["Bash(npm run test:*)", "Bash(git diff *)"] });
    expect(bash("npm run test", s)).toBe("allow");
    expect(bash("npm run test -- --watch", s)).toBe("allow");
    expect(bash("git diff HEAD && npm run test", s)).toBe("allow");
    expect(bash("npm run testx", s)).toBe("ask");
    expect(bash("npm run test && curl evil", s)).toBe("ask");
    expect(bash("git diffx", s)).toBe("ask");
    // Never wider than the config: its own rule for bash answers first.
    expect(bash("npm run test", s, { bash: "ask" })).toBe("ask");
    expect(bash("npm run test", s, { bash: { deny: ["npm *"], default: "ask" } })).toBe("deny");
  });

  it("an ask asks even where an allow (or the config) would let it through", () => {
    const s = rules({ allow: ["Bash(git:*)"], ask: ["Bash(git push:*)"] });
    expect(bash("git status", s)).toBe("allow");
    expect(bash("git push origin main", s)).toBe("ask");
    expect(bash("git push", s, { bash: "allow" })).toBe("ask");
  });

  it("`Bash` alone (and `Bash(*)`) is every command", () => {
    expect(bash("ls", rules({ deny: ["Bash"] }))).toBe("deny");
    expect(bash("ls", rules({ allow: ["Bash(*)"] }))).toBe("allow");
  });
});

describe("Claude Code's path rules", () => {
  it("anchors `//abs`, `~/`, `/` (the project folder), `./` and bare paths (the working directory)", () => {
    expect(absoluteGlob("//etc/**", base)).toBe("/etc/**");
    expect(absoluteGlob("~/secrets/*", base)).toBe("/home/me/secrets/*");
    expect(absoluteGlob("/src/**/*.ts", base)).toBe("/proj/src/**/*.ts");
    expect(absoluteGlob("./secrets/**", base)).toBe("/proj/sub/secrets/**");
    expect(absoluteGlob("docs/*.md", base)).toBe("/proj/sub/docs/*.md");
    // gitignore: a name without a slash, in any folder below.
    expect(absoluteGlob(".env", base)).toBe("/proj/sub/**/.env");
  });

  it("matches gitignore-style: `*` within a folder, `**` across, a folder covers its contents", () => {
    expect(globCovers("/p/docs/*", "/p/docs/a.md")).toBe(true);
    expect(globCovers("/p/docs/*.md", "/p/docs/x/a.md")).toBe(false);
    expect(globCovers("/p/**/*.ts", "/p/a/b/c.ts")).toBe(true);
    expect(globCovers("/p/**/*.ts", "/p/c.ts")).toBe(true);
    expect(globCovers("/p/secrets", "/p/secrets/deep/key")).toBe(true);
    expect(globCovers("/p/secret", "/p/secrets")).toBe(false);
  });

  it("Read(…) covers read_file, glob and grep; Edit(…) edit_file and write_file; Write(…) write_file", () => {
    const s = rules({ deny: ["Read(./secrets/**)", "Edit(/src/**)", "Write(docs/*.md)"] });
    expect(tool("read_file", { path: "secrets/a/key" }, s)).toBe("deny");
    expect(tool("read_file", { path: "./secrets/key" }, s)).toBe("deny");
    expect(tool("read_file", { path: "/proj/sub/secrets/key" }, s)).toBe("deny");
    expect(tool("grep", { pattern: "x", path: "secrets" }, s)).toBe("deny");
    expect(tool("glob", { pattern: "*", path: "secrets/a" }, s)).toBe("deny");
    expect(tool("read_file", { path: "src/a.ts" }, s)).toBe("allow");
    // `/src/**`: the project folder's src (cwd is /proj/sub).
    expect(tool("edit_file", { path: "../src/a.ts" }, s)).toBe("deny");
    expect(tool("write_file", { path: "/proj/src/b.ts" }, s)).toBe("deny");
    expect(tool("write_file", { path: "src/b.ts" }, s)).toBe("ask");
    expect(tool("write_file", { path: "docs/a.md" }, s)).toBe("deny");
    expect(tool("edit_file", { path: "docs/a.md" }, s)).toBe("ask");
    // `*` stays within one folder.
    expect(tool("write_file", { path: "docs/x/a.md" }, s)).toBe("ask");
  });

  it("a bare name is denied in any folder; `//` and `~/` paths outside the working directory", () => {
    const s = rules({ deny: ["Read(.env)", "Read(//etc/**)", "Read(~/.ssh/**)"] });
    expect(tool("read_file", { path: "a/b/.env" }, s)).toBe("deny");
    expect(tool("read_file", { path: "/etc/hostname" }, s)).toBe("deny");
    expect(tool("read_file", { path: "/home/me/.ssh/id_ed25519" }, s)).toBe("deny");
    expect(tool("read_file", { path: "a/b/env" }, s)).toBe("allow");
  });

  it("a relative rule meets an agent working elsewhere (a worktree child) where it works", () => {
    const s = rules({ deny: ["Read(./secrets/**)", "Read(.env)"], allow: ["Edit(./src/**)"] });
    const tree = "/proj/.warren/worktrees/w1";
    const at = (name: string, args: unknown) => decide(undefined, [], name, args, tree, s).verdict;
    expect(at("read_file", { path: "secrets/key" })).toBe("deny");
    expect(at("read_file", { path: "a/.env" })).toBe("deny");
    expect(at("write_file", { path: "src/a.ts" })).toBe("allow");
    // Where warren started too, for a deny (stricter); an allow only where the agent works.
    expect(at("read_file", { path: "/proj/sub/secrets/key" })).toBe("deny");
    expect(at("write_file", { path: "/proj/sub/src/a.ts" })).toBe("ask");
  });

  it("an allow lets a write through where warren's default asks", () => {
    const s = rules({ allow: ["Edit(./src/**)"] });
    expect(tool("write_file", { path: "src/a.ts" }, s)).toBe("allow");
    expect(tool("write_file", { path: "lib/a.ts" }, s)).toBe("ask");
  });
});

describe("MCP rules and what warren cannot apply", () => {
  it("`mcp__server` is every tool of it; `mcp__server__tool` one tool", () => {
    const s = rules({ deny: ["mcp__github", "mcp__fs__delete"], allow: ["mcp__fs__*"] });
    expect(tool("mcp__github__create_issue", { a: 1 }, s)).toBe("deny");
    expect(tool("mcp__fs__delete", { path: "x" }, s)).toBe("deny");
    expect(tool("mcp__fs__read", { path: "x" }, s)).toBe("allow");
    expect(tool("mcp__other__read", {}, s)).toBe("ask");
  });

  it("a rule warren cannot map is one warning naming it", () => {
    for (const text of [
      "WebFetch(domain:example.com)",
      "WebSearch",
      "NotebookEdit(x.ipynb)",
      "Frobnicate(x)",
      "Bash(a:*b:*)",
      "mcp__srv(x)",
      "not a rule!",
    ]) {
      const rule = parseClaudeRule(text, "deny", "s.json permissions.deny", base);
      expect(rule, text).toHaveProperty("warning");
      expect((rule as { warning: string }).warning).toContain(JSON.stringify(text));
      expect((rule as { warning: string }).warning).toContain("s.json permissions.deny");
    }
  });
});
