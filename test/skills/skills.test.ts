// Skills and command files as Claude Code and Codex lay them out: where they are read from (home
// and the project up to the repository root), their front matter, the list the model is offered
// (capped at 2 % of the window) and the expansion of a command's text.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { expandCommand, loadCommandFiles } from "../../src/skills/command-files.js";
import { trustFiles } from "../../src/config/trust.js";
import {
  findPersonCommand,
  heldSkillsAndCommands,
  personCommands,
  skillsAndCommands,
  skillsAndCommandsLines,
} from "../../src/skills/listing.js";
import {
  clearSkillsCache,
  skillBody,
  skillFiles,
  skillsFor,
  skillsPromptBlock,
} from "../../src/skills/skills.js";
import { BUILTIN_NAMES } from "../../src/ui/commands/table.js";

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** A repository with a subfolder, and a home of its own. */
function setup() {
  const base = mkdtempSync(path.join(os.tmpdir(), "warren-skills-"));
  const repo = path.join(base, "repo");
  const sub = path.join(repo, "pkg", "app");
  mkdirSync(path.join(repo, ".git"), { recursive: true });
  mkdirSync(sub, { recursive: true });
  const home = path.join(base, "home");
  mkdirSync(home);
  return { base, repo, sub, home, env: { HOME: home, WARREN_HOME: path.join(base, "warren") } };
}

/** The project's skill and command files trusted as they are (they wait for it otherwise). */
function trustAll(cwd: string, env: Record<string, string>): void {
  trustFiles(heldSkillsAndCommands(cwd, env).map((h) => h.gate));
}

const skill = (name: string, description: string, body = "Do the thing.", extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}\n`;

afterEach(() => clearSkillsCache());

describe("skills", () => {
  it("are read from home and from the project up to the repository root, the person's first", () => {
    const { repo, sub, home, env, base } = setup();
    write(path.join(home, ".claude/skills/pdf/SKILL.md"), skill("pdf", "Fill PDF forms (home)"));
    write(path.join(home, ".codex/skills/csv/SKILL.md"), skill("csv", "Clean CSV files"));
    write(path.join(repo, ".claude/skills/pdf/SKILL.md"), skill("pdf", "project copy"));
    write(path.join(repo, ".agents/skills/lint/SKILL.md"), skill("lint", "Run the linters"));
    write(path.join(sub, ".claude/skills/deploy/SKILL.md"), skill("deploy", "Deploy the app"));
    write(path.join(repo, ".warren/skills/notes/SKILL.md"), skill("notes", "Write notes"));
    // Above the repository root: not this project's.
    write(path.join(base, ".claude/skills/outside/SKILL.md"), skill("outside", "not read"));
    trustAll(sub, env);
    const { skills, warnings } = skillsFor(sub, env);
    expect(skills.map((s) => s.name).sort()).toEqual(["csv", "deploy", "lint", "notes", "pdf"]);
    expect(skills.find((s) => s.name === "pdf")!.description).toBe("Fill PDF forms (home)");
    expect(warnings.join("\n")).toMatch(/skill "pdf" in .*repo\/\.claude\/skills.* ignored/);
  });

  it("a bad front matter is one warning naming the file and line; the others stay", () => {
    const { repo, env } = setup();
    write(path.join(repo, ".claude/skills/bad/SKILL.md"), "---\nname: bad\ndescription: [x\n---\n");
    write(path.join(repo, ".claude/skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\nbody\n");
    write(path.join(repo, ".claude/skills/plain/SKILL.md"), "no front matter at all\n");
    write(path.join(repo, ".claude/skills/good/SKILL.md"), skill("good", "Fine"));
    trustAll(repo, env);
    const { skills, warnings } = skillsFor(repo, env);
    expect(skills.map((s) => s.name)).toEqual(["good"]);
    expect(warnings).toHaveLength(3);
    expect(warnings.join("\n")).toMatch(/bad\/SKILL\.md:\d+: invalid front matter/);
    expect(warnings.join("\n")).toMatch(/nodesc\/SKILL\.md:2: "description" is required/);
    expect(warnings.join("\n")).toMatch(/plain\/SKILL\.md:1: no front matter/);
  });

  it("offers names and descriptions only; disable-model-invocation hides one from the model", () => {
    const { repo, env } = setup();
    write(
      path.join(repo, ".claude/skills/pdf/SKILL.md"),
      skill("pdf", "Fill PDF forms", "SECRET BODY TEXT"),
    );
    write(
      path.join(repo, ".claude/skills/release/SKILL.md"),
      skill("release", "Cut a release", "steps", "disable-model-invocation: true\n"),
    );
    write(path.join(repo, ".claude/skills/pdf/forms.md"), "field list");
    write(path.join(repo, ".claude/skills/pdf/scripts/fill.py"), "print(1)");
    trustAll(repo, env);
    const { skills } = skillsFor(repo, env);
    const block = skillsPromptBlock(skills, 32_768);
    expect(block).toContain("- pdf: Fill PDF forms");
    expect(block).not.toContain("SECRET BODY TEXT");
    expect(block).not.toContain("release");
    const pdf = skills.find((s) => s.name === "pdf")!;
    expect(skillBody(pdf)).toBe("SECRET BODY TEXT");
    expect(skillFiles(pdf)).toEqual(["forms.md", path.join("scripts", "fill.py")]);
  });

  it("the list takes at most 2% of the window, cut with a note saying how many are left out", () => {
    const { repo, env } = setup();
    for (let i = 0; i < 60; i++) {
      const name = `skill-${String(i).padStart(2, "0")}`;
      write(path.join(repo, `.claude/skills/${name}/SKILL.md`), skill(name, "x".repeat(80)));
    }
    trustAll(repo, env);
    const { skills } = skillsFor(repo, env);
    const window = 32_768;
    const block = skillsPromptBlock(skills, window);
    expect(block.length).toBeLessThanOrEqual(window * 0.02 * 4 + 120);
    const listed = block.split("\n").filter((l) => l.startsWith("- skill-")).length;
    expect(listed).toBeGreaterThan(0);
    expect(listed).toBeLessThan(60);
    expect(block).toContain(`[${60 - listed} more skill(s) not listed`);
    // A large window lists them all.
    expect(skillsPromptBlock(skills, 1_000_000)).not.toContain("not listed");
  });

  it("allowed-tools is split on commas and spaces outside (), each entry a rule; one it cannot map is a warning", () => {
    const { repo, env } = setup();
    write(
      path.join(repo, ".claude/skills/ro/SKILL.md"),
      skill("ro", "Read only", "body", "allowed-tools: Read, Grep Bash(git status:*), WebFetch\n"),
    );
    trustAll(repo, env);
    const { skills, warnings } = skillsFor(repo, env);
    expect(skills[0]!.allowedTools).toEqual(["Read", "Grep", "Bash(git status:*)", "WebFetch"]);
    expect(skills[0]!.allowedRules!.map((r) => r.text)).toEqual([
      "Read",
      "Grep",
      "Bash(git status:*)",
    ]);
    expect(warnings).toEqual([
      'skill "ro" allowed-tools: "WebFetch" is not applied: warren has no WebFetch tool (that tool stays refused while it is in use)',
    ]);
  });
});

describe("command files", () => {
  it("are read from every source, namespaced by subfolder, never shadowing a built-in", () => {
    const { repo, sub, home, env } = setup();
    write(path.join(home, ".claude/commands/review.md"), "---\ndescription: home review\n---\nR");
    write(path.join(home, ".codex/prompts/explain.md"), "Explain $1");
    write(path.join(repo, ".claude/commands/review.md"), "project review");
    write(path.join(repo, ".claude/commands/frontend/test.md"), "Test the frontend");
    write(path.join(sub, ".claude/commands/local.md"), "near");
    write(path.join(repo, ".warren/commands/ship.md"), "Ship it");
    write(path.join(repo, ".claude/commands/help.md"), "mine");
    write(path.join(repo, ".claude/commands/bad.md"), "---\ndescription: [\n---\nx");
    trustAll(sub, env);
    const { commands, warnings } = loadCommandFiles(sub, env, BUILTIN_NAMES);
    expect(commands.map((c) => c.name).sort()).toEqual([
      "explain",
      "frontend:test",
      "local",
      "review",
      "ship",
    ]);
    expect(commands.find((c) => c.name === "review")!.description).toBe("home review");
    const text = warnings.join("\n");
    expect(text).toMatch(/help\.md: \/help is warren's own command; the file is not used/);
    expect(text).toMatch(/repo\/\.claude\/commands\/review\.md: \/review ignored/);
    expect(text).toMatch(/bad\.md:\d+: invalid front matter/);
  });

  it("allowed-tools is read as a skill's: each entry a rule, one it cannot map a warning; a bad one leaves the file out", () => {
    const { home, env } = setup();
    const dir = path.join(home, ".claude/commands");
    write(path.join(dir, "ro.md"), "---\nallowed-tools: Read, Bash(git status:*) WebFetch\n---\nx");
    write(path.join(dir, "odd.md"), "---\nallowed-tools: 3\n---\nx");
    write(path.join(dir, "free.md"), "x");
    const { commands, warnings } = loadCommandFiles(home, env);
    expect(commands.map((c) => c.name).sort()).toEqual(["free", "ro"]);
    const ro = commands.find((c) => c.name === "ro")!;
    expect(ro.allowedTools).toEqual(["Read", "Bash(git status:*)", "WebFetch"]);
    expect(ro.allowedRules!.map((r) => r.text)).toEqual(["Read", "Bash(git status:*)"]);
    expect(commands.find((c) => c.name === "free")!.allowedTools).toBeUndefined();
    expect(warnings).toEqual([
      '~/.claude/commands/odd.md: "allowed-tools" must be a comma-separated string or a list; the file is not used',
      'command "/ro" allowed-tools: "WebFetch" is not applied: warren has no WebFetch tool (that tool stays refused while it is in use)',
    ]);
  });

  it("expands $ARGUMENTS and $1…$9, appends unreferenced arguments", async () => {
    const { repo } = setup();
    const opts = { cwd: repo };
    expect((await expandCommand("Review $ARGUMENTS now", "the api", opts)).text).toBe(
      "Review the api now",
    );
    expect(
      (await expandCommand("Fix #$1 with priority $2 ($3)", '42 "very high"', opts)).text,
    ).toBe("Fix #42 with priority very high ()");
    expect((await expandCommand("Plain prompt", "extra words", opts)).text).toBe(
      "Plain prompt\n\nARGUMENTS: extra words",
    );
  });

  it("!`cmd` goes through the caller's shell; argument text is never run or read", async () => {
    const { repo } = setup();
    const ran: string[] = [];
    const shell = async (command: string) => {
      ran.push(command);
      return `<<${command}>>`;
    };
    const out = await expandCommand("Status: !`git status`\nAbout: $ARGUMENTS", "!`rm -rf x`", {
      cwd: repo,
      shell,
    });
    expect(ran).toEqual(["git status"]);
    expect(out.text).toBe("Status: <<git status>>\nAbout: !`rm -rf x`");
    // Without a shell nothing runs: the place says so.
    const none = await expandCommand("!`date`", "", { cwd: repo });
    expect(none.text).toBe("[not run: date]");
    expect(none.warnings).toHaveLength(1);
  });

  it("@file includes a file inside the project and refuses one outside with a warning", async () => {
    const { repo, base } = setup();
    write(path.join(repo, "src/a.ts"), "export const a = 1;\n");
    write(path.join(base, "secret.txt"), "TOP SECRET");
    const out = await expandCommand("Review @src/a.ts and @../secret.txt, ask @alice", "", {
      cwd: repo,
    });
    expect(out.text).toContain('<file path="src/a.ts">\nexport const a = 1;\n</file>');
    expect(out.text).not.toContain("TOP SECRET");
    expect(out.warnings).toEqual([
      `@../secret.txt not included: it is outside the project (${repo})`,
    ]);
    // An argument naming a file is not read.
    const arg = await expandCommand("Look at $1", "@src/a.ts", { cwd: repo });
    expect(arg.text).toBe("Look at @src/a.ts");
  });
});

describe("the person's commands and the listing", () => {
  it("joins command files and skills; a skill runs as /name with its body and arguments", async () => {
    const { repo, env } = setup();
    write(
      path.join(repo, ".claude/commands/review.md"),
      "---\ndescription: Review code\nargument-hint: [area] [depth]\n---\nReview $ARGUMENTS",
    );
    write(path.join(repo, ".claude/skills/pdf/SKILL.md"), skill("pdf", "PDF forms", "PDF STEPS"));
    write(path.join(repo, ".claude/skills/agents/SKILL.md"), skill("agents", "clashes"));
    trustAll(repo, env);
    const { commands, warnings } = personCommands(repo, BUILTIN_NAMES, env);
    expect(commands.map((c) => [c.name, c.usage, c.kind])).toEqual([
      ["review", "/review [area] [depth]", "command"],
      ["pdf", "/pdf [ARGS]", "skill"],
    ]);
    expect(warnings.join("\n")).toContain(`skill "agents": /agents is warren's own command`);
    const found = findPersonCommand(commands, "/pdf fill form.pdf")!;
    const text = (await found.command.expand(found.args, { cwd: repo })).text;
    expect(text).toContain("PDF STEPS");
    expect(text).toContain("ARGUMENTS: fill form.pdf");
    expect(findPersonCommand(commands, "/nothing")).toBeUndefined();
  });

  it("lists what was read and every warning (for the first screen and warren doctor)", () => {
    const { repo, env } = setup();
    write(path.join(repo, ".claude/commands/review.md"), "Review");
    write(path.join(repo, ".claude/skills/pdf/SKILL.md"), skill("pdf", "PDF forms"));
    write(path.join(repo, ".claude/skills/bad/SKILL.md"), "---\n: :\n");
    trustAll(repo, env);
    const listing = skillsAndCommands(repo, BUILTIN_NAMES, env);
    expect(listing.skills.found).toEqual([
      `pdf (${path.join(repo, ".claude/skills/pdf/SKILL.md")})`,
    ]);
    expect(listing.commands.found).toEqual([
      `/review (${path.join(repo, ".claude/commands/review.md")})`,
    ]);
    expect(listing.skills.warnings).toHaveLength(1);
    const lines = skillsAndCommandsLines(repo, BUILTIN_NAMES, env);
    expect(lines[0]).toBe("skills: 1 (pdf)");
    expect(lines[1]).toBe("commands: 1 (/review)");
    expect(lines[2]).toMatch(/^ {2}warning: .*bad\/SKILL\.md:1: the front matter has no closing/);
  });
});
