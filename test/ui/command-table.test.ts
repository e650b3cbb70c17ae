// The command table (issue 39 item 5): every command the dispatcher accepts is listed in /help and
// completes with Tab; the person's command files and skills join /help and completion with their
// argument hints and run as /name ARGS (the expanded text reaches the viewed agent as input).
import { trustFiles } from "../../src/config/trust.js";
import { heldSkillsAndCommands } from "../../src/skills/listing.js";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createTree } from "../../src/agents/tree.js";
import { loadConfig } from "../../src/config/config.js";
import { clearSkillsCache } from "../../src/skills/skills.js";
import { createActions } from "../../src/ui/actions.js";
import { completeCommand, parseCommand } from "../../src/ui/commands.js";
import { BUILTIN_NAMES, COMMANDS, helpRows } from "../../src/ui/commands/table.js";
import { completeInput } from "../../src/ui/completion.js";
import { createController } from "../../src/ui/controller.js";
import { renderHelp } from "../../src/ui/views/index.js";
import { mailOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

/** Every word the dispatcher might take as a command name: the table's, aliases, and near misses. */
function candidates(): string[] {
  const words = new Set<string>(BUILTIN_NAMES);
  for (const name of BUILTIN_NAMES) {
    words.add(name.toUpperCase());
    words.add(name.slice(0, -1));
    words.add(`${name}x`);
  }
  for (const w of ["quit", "q", "?", "h", "models", "mcps", "task", "worktree", "rewind"]) {
    words.add(w);
  }
  return [...words].filter(Boolean);
}

describe("the command table", () => {
  it("lists in /help every command the dispatcher accepts", () => {
    const help = renderHelp("Ctrl+T", undefined, helpRows()).join("\n");
    const accepted = new Set<string>();
    for (const word of candidates()) {
      const parsed = parseCommand(`/${word}`);
      // Accepted: parsed, or refused for its arguments (not as an unknown command).
      if (parsed.ok) accepted.add(parsed.command.name);
      else if (!parsed.error.startsWith("unknown command")) {
        accepted.add(word.toLowerCase());
      }
    }
    for (const name of accepted) {
      const spec = COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
      expect(spec, `/${name} is accepted but has no table entry`).toBeDefined();
      expect(help).toContain(spec!.usage);
    }
    // The ones /help used to leave out.
    for (const name of ["mcp", "tasks", "diff", "merge", "discard", "search", "stop", "capture"]) {
      expect(accepted.has(name)).toBe(true);
      expect(help).toMatch(new RegExp(`^ {2}/${name}\\b`, "m"));
    }
    // And the table holds nothing the dispatcher refuses: each name completes to itself.
    for (const spec of COMMANDS) {
      expect(completeCommand(spec.name)).toContain(spec.name);
      const parsed = parseCommand(`/${spec.name}`);
      if (!parsed.ok) expect(parsed.error).not.toMatch(/^unknown command/);
    }
  });
});

describe("the person's commands in the TUI", () => {
  it("/help and Tab list them with their argument hint; /review security sends its text", async () => {
    clearSkillsCache();
    const dir = mkdtempSync(path.join(os.tmpdir(), "warren-cmd-tui-"));
    const work = path.join(dir, "work");
    const home = path.join(dir, "home");
    mkdirSync(path.join(work, ".git"), { recursive: true });
    mkdirSync(path.join(work, ".claude/commands"), { recursive: true });
    mkdirSync(path.join(work, ".claude/skills/pdf"), { recursive: true });
    mkdirSync(home);
    writeFileSync(
      path.join(work, ".claude/commands/review.md"),
      "---\ndescription: Review the code for one concern\nargument-hint: [area]\n---\nReview this project for $ARGUMENTS problems.\n",
    );
    writeFileSync(path.join(work, ".claude/commands/stop.md"), "shadow attempt");
    writeFileSync(
      path.join(work, ".claude/skills/pdf/SKILL.md"),
      "---\nname: pdf\ndescription: Fill PDF forms\n---\nPDF SKILL BODY\n",
    );
    const env = {
      HOME: home,
      WARREN_HOME: path.join(home, "w"),
      WARREN_CONFIG: path.join(dir, "none.json"),
    };
    // The project's command files and skills wait for the person's trust.
    trustFiles(heldSkillsAndCommands(work, env).map((h) => h.gate));
    const config = loadConfig(env, work);
    const db = e2e.db();
    const root = await createTree(db, { name: "tui-root" });
    const controller = createController({
      db,
      feed: {
        treeId: root.id,
        subscribe: () => () => {},
        watchStreams: () => {},
        close: async () => {},
      },
      rootId: root.id,
      onChange: () => {},
      onError: (message) => expect.fail(message),
    });
    await controller.start();
    const actions = createActions({
      db,
      config,
      controller,
      helpLines: (own) => renderHelp("Ctrl+T", undefined, helpRows(own)),
      treeLines: () => [],
      search: () => {},
      tasks: () => {},
      quit: () => {},
      onChange: () => {},
      cwd: work,
      env,
    });
    const notices = () =>
      controller
        .entries()
        .flatMap((e) => (e.kind === "notice" ? [e.text] : []))
        .join("\n");
    try {
      await actions.submit("/help");
      const shown = notices();
      expect(shown).toMatch(/^ {2}\/review \[area\] +Review the code for one concern$/m);
      expect(shown).toMatch(/^ {2}\/pdf \[ARGS\] +skill: Fill PDF forms$/m);
      expect(shown).toMatch(/^ {2}\/mcp \[allow\] /m);
      // A file never shadows a built-in: said once, by name.
      const shadow = /\/stop is warren's own command; the file is not used/g;
      expect(shown.match(shadow)).toHaveLength(1);
      await actions.submit("/help");
      expect(notices().match(shadow)).toHaveLength(1);

      const own = actions.personCommands();
      expect(await completeInput("/rev", async () => [], own)).toEqual({
        text: "/review ",
        hint: "/review [area] — Review the code for one concern",
      });
      expect(await completeInput("/p", async () => [], own)).toEqual({
        text: "/pdf ",
        hint: "/pdf [ARGS] — skill: Fill PDF forms",
      });

      expect(await actions.submit("/review security")).toBe(true);
      expect(await actions.submit("/pdf fill form.pdf")).toBe(true);
      const inputs = (await mailOf(db, root.id)).filter((m) => m.kind === "input");
      expect(inputs.map((m) => m.body)).toEqual([
        "Review this project for security problems.",
        expect.stringMatching(/PDF SKILL BODY[\s\S]*ARGUMENTS: fill form\.pdf$/),
      ]);
      // An unknown name still says so, with the person's commands among the guesses.
      await actions.submit("/reviwe x");
      expect(notices()).toContain("unknown command /reviwe — did you mean /review?");
    } finally {
      controller.close();
    }
  }, 60_000);
});
