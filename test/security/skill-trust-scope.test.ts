// A project's skills and command files wait for the person's trust, and a skill's or a command
// file's `allowed-tools` narrows the agent's tools while it is in use, never widening them
// (SPEC §9). End to end through `bin/warren -p` and the fake model server (needs `npm run build`).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

function project(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-skill-scope-"));
  mkdirSync(path.join(dir, ".git"));
  return dir;
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** One warren home (the trust store) for every run of a test, and a home of the person's own. */
function homes(cwd: string): Record<string, string> {
  mkdirSync(`${cwd}-home`);
  return { WARREN_HOME: `${cwd}-warren`, HOME: `${cwd}-home` };
}

const output = (value: unknown) => JSON.stringify(value);

/** A project holding `file` (and notes.txt), trusted by the person. */
async function trustedWith(
  file: string,
  text: string,
): Promise<{ cwd: string; env: Record<string, string> }> {
  const cwd = project();
  const env = homes(cwd);
  write(path.join(cwd, file), text);
  writeFileSync(path.join(cwd, "notes.txt"), "NOTES");
  const trusted = await e2e.warren(["trust"], env, cwd);
  expect(trusted.code, trusted.stderr).toBe(0);
  return { cwd, env };
}

describe("a project's skills and command files wait for trust", () => {
  it("held (not offered, /name not a command, one waiting line) until `warren trust`; the person's own are not held", async () => {
    const cwd = project();
    const env = homes(cwd);
    write(
      path.join(cwd, ".claude/skills/pdf/SKILL.md"),
      "---\nname: pdf\ndescription: Fill in PDF forms\n---\nPDF-BODY\n",
    );
    write(path.join(cwd, ".claude/commands/review.md"), "REVIEW-TEXT $ARGUMENTS\n");
    write(
      path.join(env.HOME!, ".claude/skills/mine/SKILL.md"),
      "---\nname: mine\ndescription: The person's own\n---\nMINE-BODY\n",
    );
    const fake = e2e.fake();
    fake.script([{ agent: "root", match: isFirst, reply: { text: "ok" } }]);
    const held = await e2e.prompt("/review security", { cwd, env });
    expect(held.code, held.stderr).toBe(0);
    const [first] = requestsOf(fake, "root");
    expect(first!.systemPrompt).toContain("- mine: The person's own");
    expect(first!.systemPrompt).not.toContain("pdf");
    // Not a command yet: sent as typed.
    expect(JSON.stringify(first!.messages)).toContain("/review security");
    expect(JSON.stringify(first!.messages)).not.toContain("REVIEW-TEXT");
    const skillFile = path.join(cwd, ".claude/skills/pdf/SKILL.md");
    const commandFile = path.join(cwd, ".claude/commands/review.md");
    expect(held.stderr).toContain(
      `warren: waiting for \`warren trust\`: ${skillFile}, ${commandFile} (the project's skill and command files are not used until you trust them)\n`,
    );
    const doctor = await e2e.warren(["doctor"], env, cwd);
    expect(doctor.stdout).toContain(`waiting for \`warren trust\`: ${skillFile}`);
    expect(doctor.stdout).toContain(`waiting for \`warren trust\`: ${commandFile}`);

    const trusted = await e2e.warren(["trust"], env, cwd);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toContain(`trusting ${skillFile}: the skill pdf`);
    expect(trusted.stdout).toContain(`trusting ${commandFile}: the command /review`);

    fake.script([{ agent: "root", match: isFirst, reply: { text: "ok" } }]);
    const after = await e2e.prompt("/review security", { cwd, env });
    expect(after.stderr).not.toContain("waiting for");
    const [second] = requestsOf(fake, "root").slice(1);
    expect(second!.systemPrompt).toContain("- pdf: Fill in PDF forms");
    expect(JSON.stringify(second!.messages)).toContain("REVIEW-TEXT security");

    // A changed file waits again.
    write(path.join(cwd, ".claude/commands/review.md"), "CHANGED $ARGUMENTS\n");
    fake.script([{ agent: "root", match: isFirst, reply: { text: "ok" } }]);
    const changed = await e2e.prompt("/review x", { cwd, env });
    expect(changed.stderr).toContain(`waiting for \`warren trust\`: ${commandFile}`);
  }, 120_000);
});

describe("a skill's or a command file's allowed-tools", () => {
  const git =
    "---\nname: git\ndescription: Look at git\nallowed-tools: Read, Bash(git status:*)\n---\nGIT-BODY\n";

  const trustedProject = (skill: string) => trustedWith(".claude/skills/git/SKILL.md", skill);

  it("once the model loads the skill, a call outside its list is refused naming the skill; the listed ones run", async () => {
    const { cwd, env } = await trustedProject(git);
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ id: "b0", name: "bash", arguments: { command: "echo before-skill" } }],
        },
      },
      {
        agent: "root",
        match: after("bash"),
        reply: { toolCalls: [{ id: "s1", name: "skill", arguments: { name: "git" } }] },
      },
      {
        agent: "root",
        match: after("skill"),
        reply: {
          toolCalls: [
            { id: "b1", name: "bash", arguments: { command: "echo after-skill" } },
            { id: "r1", name: "read_file", arguments: { path: "notes.txt" } },
            { id: "b2", name: "bash", arguments: { command: "git status" } },
            { id: "w1", name: "write_file", arguments: { path: "x.txt", content: "x" } },
          ],
        },
      },
      { agent: "root", match: after("write_file"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd,
      env,
      config: { policy: { bash: "allow", write_file: "allow" } },
    });
    expect(run.json?.text, run.stderr).toBe("done");
    const requests = requestsOf(fake, "root");
    // Before the skill is loaded: not narrowed.
    expect(output(lastToolResults(requests[1]!)[0]!.value)).toContain("before-skill");
    const [echo, read, status, written] = lastToolResults(requests[3]!).map((r) => output(r.value));
    expect(echo).toContain("NOT_ALLOWED");
    expect(echo).toContain(
      'the skill \\"git\\" is in use for this turn and its allowed-tools (Read, Bash(git status:*)) do not include it',
    );
    expect(read).toContain("NOTES");
    expect(status).not.toContain("NOT_ALLOWED");
    expect(written).toContain('the skill \\"git\\" is in use');
  }, 120_000);

  it.each([
    {
      what: "a skill",
      file: ".claude/skills/git/SKILL.md",
      front: "name: git\ndescription: Look at git",
      typed: "/git look",
      named: 'the skill \\"git\\"',
    },
    {
      what: "a command file",
      file: ".claude/commands/status.md",
      front: "description: Look at git",
      typed: "/status look",
      named: 'the command \\"/status\\"',
    },
  ])(
    "$what run by the person narrows that turn to its list, naming it; never past the policy's deny",
    async ({ file, front, typed, named }) => {
      const { cwd, env } = await trustedWith(
        file,
        `---\n${front}\nallowed-tools: Read, Bash(git status:*) Bash(rm:*)\n---\nGIT-BODY $ARGUMENTS\n`,
      );
      const fake = e2e.fake();
      fake.script([
        {
          agent: "root",
          match: isFirst,
          reply: {
            toolCalls: [
              { id: "b1", name: "bash", arguments: { command: "echo person-run" } },
              { id: "r1", name: "read_file", arguments: { path: "notes.txt" } },
              { id: "b2", name: "bash", arguments: { command: "git status" } },
              { id: "w1", name: "write_file", arguments: { path: "x.txt", content: "x" } },
              { id: "b3", name: "bash", arguments: { command: "rm -f notes.txt" } },
            ],
          },
        },
        { agent: "root", match: after("bash"), reply: { text: "done" } },
      ]);
      const run = await e2e.prompt(typed, {
        cwd,
        env: { ...env, WARREN_APPROVE: "all" },
        config: { policy: { bash: { default: "allow", deny: ["rm *"] }, write_file: "allow" } },
      });
      expect(run.json?.text, run.stderr).toBe("done");
      const [first, second] = requestsOf(fake, "root");
      expect(first!.lastMessage?.content).toMatch(/^Use the (skill|command) "[^"]+" \(.*\):\n\n/);
      expect(first!.lastMessage?.content).toContain("GIT-BODY");
      const results = lastToolResults(second!).map((r) => output(r.value));
      const [echo, read, status, written, rm] = results;
      expect(echo).toContain(
        `${named} is in use for this turn and its allowed-tools (Read, Bash(git status:*), Bash(rm:*)) do not include it`,
      );
      expect(read).toContain("NOTES");
      expect(status).not.toContain("NOT_ALLOWED");
      expect(written).toContain(`${named} is in use`);
      // Listed, but denied by the policy: the deny stands.
      expect(rm).toContain("denied by the tool policy");
    },
    120_000,
  );
});
