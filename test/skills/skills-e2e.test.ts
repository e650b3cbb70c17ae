// Skills and command files end to end through `warren -p` and the fake model server: the model is
// offered a skill's name and description only, and gets its body when it calls the skill tool;
// `warren -p "/review security"` runs the command file's expanded text as the prompt, its
// !`cmd` run through the bash policy (a deny keeps it from running even under --approve all).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

function project(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-skills-e2e-"));
  mkdirSync(path.join(dir, ".git"));
  return dir;
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** `warren trust` in `cwd` (a project's skills and command files wait for it); the env to run with. */
async function trusted(cwd: string): Promise<Record<string, string>> {
  const env = { WARREN_HOME: `${cwd}-warren` };
  const run = await e2e.warren(["trust"], env, cwd);
  expect(run.code, run.stderr).toBe(0);
  return env;
}

describe("skills through warren -p", () => {
  it("offers name and description; the body reaches the model only through the skill tool", async () => {
    const cwd = project();
    write(
      path.join(cwd, ".claude/skills/pdf/SKILL.md"),
      "---\nname: pdf\ndescription: Fill in PDF forms\n---\nPDF-BODY-MARKER: use pdftk.\n",
    );
    write(path.join(cwd, ".claude/skills/pdf/reference.md"), "REFERENCE-MARKER");
    write(
      path.join(cwd, ".claude/skills/secret/SKILL.md"),
      "---\nname: secret\ndescription: Person only\ndisable-model-invocation: true\n---\nSECRET-BODY\n",
    );
    const env = await trusted(cwd);
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ id: "c1", name: "skill", arguments: { name: "pdf" } }] },
      },
      {
        agent: "root",
        match: after("skill"),
        reply: {
          toolCalls: [
            { id: "c2", name: "skill", arguments: { name: "pdf", file: "reference.md" } },
            { id: "c3", name: "skill", arguments: { name: "secret" } },
          ],
        },
      },
      { agent: "root", match: after("skill"), reply: { text: "Filled." } },
    ]);
    const run = await e2e.prompt("Fill the form.", { cwd, env });
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("Filled.");
    const [first, second, third] = requestsOf(fake, "root");
    expect(first!.tools).toContain("skill");
    expect(first!.systemPrompt).toContain("- pdf: Fill in PDF forms");
    expect(first!.systemPrompt).not.toContain("secret");
    // The body is nowhere in the first request: loaded only when used.
    expect(JSON.stringify(first!.messages)).not.toContain("PDF-BODY-MARKER");
    expect(lastToolResults(second!)[0]!.value).toEqual({
      name: "pdf",
      instructions: "PDF-BODY-MARKER: use pdftk.",
      files: ["reference.md"],
    });
    const [file, hidden] = lastToolResults(third!);
    expect(file!.value).toEqual({ name: "pdf", file: "reference.md", content: "REFERENCE-MARKER" });
    // disable-model-invocation: the model cannot load it.
    expect(JSON.stringify(hidden!.value)).toContain('no skill \\"secret\\"');
    expect(JSON.stringify(third!.messages)).not.toContain("SECRET-BODY");
  }, 60_000);
});

describe("command files through warren -p", () => {
  const review =
    "---\ndescription: Review for one concern\nargument-hint: [area]\n---\n" +
    "Review this project for $ARGUMENTS issues.\nBranch: !`echo from-the-shell`\n";

  it("runs the command's expanded text as the prompt", async () => {
    const cwd = project();
    write(path.join(cwd, ".claude/commands/review.md"), review);
    const env = await trusted(cwd);
    const fake = e2e.fake();
    fake.script({ agent: "root", match: isFirst, reply: { text: "Reviewed." } });
    const run = await e2e.prompt("/review security", { cwd, env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const [first] = requestsOf(fake, "root");
    expect(first!.lastMessage?.content).toBe(
      "Review this project for security issues.\nBranch: from-the-shell",
    );
  }, 60_000);

  it("a !`cmd` the policy denies is not run, even under --approve all; stderr says so", async () => {
    const cwd = project();
    write(path.join(cwd, ".claude/commands/review.md"), review);
    const env = await trusted(cwd);
    const fake = e2e.fake();
    fake.script({ agent: "root", match: isFirst, reply: { text: "Reviewed." } });
    const run = await e2e.prompt("/review security", {
      cwd,
      config: { policy: { bash: "deny" } },
      env: { ...env, WARREN_APPROVE: "all" },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      "warren: /review: !`echo from-the-shell` not run: the tool policy denies it (bash)",
    );
    const [first] = requestsOf(fake, "root");
    expect(first!.lastMessage?.content).toBe(
      "Review this project for security issues.\n" +
        "Branch: [not run: `echo from-the-shell` — the tool policy denies it]",
    );
  }, 60_000);
});
