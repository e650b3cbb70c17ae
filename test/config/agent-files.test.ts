// Agent files as profiles (SPEC section 9): .warren/agents, the config dir's agents/, Claude Code's
// .claude/agents and ~/.claude/agents; front matter read with the `yaml` library; Claude Code's tool
// names mapped; send/wait always kept; a bad file is one warning; the config's profiles win.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadAgentFiles } from "../../src/config/agent-files.js";
import { loadConfig } from "../../src/config/config.js";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { lastToolResults, requestsOf } from "../runtime/e2e-support.js";

interface World {
  project: string;
  home: string;
  config: string;
  env: Record<string, string>;
}

function makeWorld(): World {
  const base = mkdtempSync(path.join(os.tmpdir(), "warren-agentfiles-"));
  const project = path.join(base, "project");
  const home = path.join(base, "home");
  const config = path.join(home, "config");
  mkdirSync(path.join(project, ".git"), { recursive: true });
  mkdirSync(home, { recursive: true });
  return { project, home, config, env: { HOME: home, XDG_CONFIG_HOME: config } };
}

function put(dir: string, file: string, text: string): string {
  mkdirSync(dir, { recursive: true });
  const full = path.join(dir, file);
  writeFileSync(full, text);
  return full;
}

const REVIEWER = `---
name: reviewer
description: Reviews a change for bugs; read-only.
tools: Read, Grep, Glob, WebFetch
model: inherit
---
You review code. You never edit files.
`;

const COUNT_SCHEMA = {
  type: "object",
  properties: { count: { type: "integer" } },
  required: ["count"],
  additionalProperties: false,
};

/** An agent file whose children give their result as COUNT_SCHEMA. */
const COUNTER = `---
description: Counts things.
output_schema:
  type: object
  properties:
    count: {type: integer}
  required: [count]
  additionalProperties: false
---
You count.
`;

const escapeRe = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("agent files", () => {
  it("a Claude Code agent file is a profile with its tools mapped and send/wait kept", () => {
    const w = makeWorld();
    const file = put(path.join(w.project, ".claude", "agents"), "reviewer.md", REVIEWER);
    const found = loadAgentFiles(w.project, w.env);
    expect(found.profiles.reviewer).toEqual({
      system_prompt: "You review code. You never edit files.",
      description: "Reviews a change for bugs; read-only.",
      tools: ["glob", "grep", "read_file", "send", "wait"],
    });
    expect(found.files.reviewer).toBe(file);
    // The unknown tool: one line naming the file and the line of `tools`.
    expect(found.warnings).toEqual([`${file}:4: tool "WebFetch" is not one warren has; ignored`]);
  });

  it("reads warren's fields, tools as a list, and maps Edit/MultiEdit/Write/Bash/Task", () => {
    const w = makeWorld();
    put(
      path.join(w.project, ".warren", "agents"),
      "builder.md",
      `---
description: Builds things
tools: [Write, Edit, MultiEdit, Bash, Task, mcp__github__*]
model: small-model
budget: {turns: 5, usd: 0.5}
policy: {bash: {allow: ["npm test"], default: ask}}
file_access: cwd
isolation: worktree
---
Build it.
`,
    );
    const found = loadAgentFiles(path.join(w.project), w.env);
    expect(found.warnings).toEqual([]);
    expect(found.profiles.builder).toEqual({
      system_prompt: "Build it.",
      description: "Builds things",
      tools: ["bash", "edit_file", "fork", "mcp__github__*", "send", "wait", "write_file"],
      model: "small-model",
      budget: { turns: 5, usd: 0.5 },
      policy: { bash: { allow: ["npm test"], default: "ask" } },
      file_access: "cwd",
      isolation: "worktree",
    });
  });

  it("a malformed file is one warning with file and line; the others still load", () => {
    const w = makeWorld();
    const dir = path.join(w.project, ".claude", "agents");
    put(dir, "reviewer.md", REVIEWER);
    const bad = put(
      dir,
      "broken.md",
      `---
name: broken
description: ok
tools: [Read, Grep
model: x
---
Body.
`,
    );
    const badField = put(
      dir,
      "typo.md",
      `---
name: typo
description: fine
file_access: everywhere
---
Body.
`,
    );
    const noFront = put(dir, "plain.md", "Just text, no front matter.\n");
    const found = loadAgentFiles(w.project, w.env);
    expect(Object.keys(found.profiles)).toEqual(["reviewer"]);
    const mine = found.warnings.filter((l) => !l.includes("WebFetch"));
    expect(mine).toHaveLength(3);
    // The unclosed list of line 4 is seen where the next field starts, line 5.
    expect(mine[0]).toMatch(new RegExp(`^${bad}:5: invalid front matter: Flow sequence`));
    expect(mine[1]).toBe(`${noFront}:1: no front matter: an agent file starts with a --- line`);
    expect(mine[2]).toBe(`${badField}:4: "file_access" must be "cwd" or "any"`);
    for (const line of found.warnings) expect(line).not.toContain("\n");
  });

  it("output_schema: a mapping is the profile's; a schema ajv refuses is one warning, the profile kept", () => {
    const w = makeWorld();
    const dir = path.join(w.project, ".warren", "agents");
    put(dir, "counter.md", COUNTER);
    const bad = put(
      dir,
      "broken.md",
      "---\ndescription: d\noutput_schema: {type: nonsense}\n---\nBody.\n",
    );
    const list = put(dir, "listed.md", "---\noutput_schema: [1]\n---\nBody.\n");
    const found = loadAgentFiles(w.project, w.env);
    expect(found.profiles.counter?.output_schema).toEqual(COUNT_SCHEMA);
    expect(found.profiles.broken).toEqual({ system_prompt: "Body.", description: "d" });
    expect(found.profiles.listed).toEqual({ system_prompt: "Body." });
    expect(found.warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^${escapeRe(bad)}:3: "output_schema": invalid JSON Schema: .+; not used$`),
      ),
      `${list}:2: "output_schema" must be a mapping (a JSON Schema), got array`,
    ]);
    // The config's own profiles: the same check, one warning naming the config file.
    const configFile = put(
      path.join(w.config, "warren"),
      "config.json",
      JSON.stringify({
        profiles: {
          good: { output_schema: COUNT_SCHEMA },
          bad: { system_prompt: "p", output_schema: { type: 12 } },
        },
      }),
    );
    const config = loadConfig({ ...w.env, WARREN_CONFIG: configFile }, w.project);
    expect(config.profiles.good).toEqual({ output_schema: COUNT_SCHEMA });
    expect(config.profiles.bad).toEqual({ system_prompt: "p" });
    expect(config.warnings).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^${escapeRe(configFile)}: profiles\\.bad\\.output_schema: invalid JSON Schema: .+; not used$`,
        ),
      ),
    );
  });

  it("precedence: config > user warren > user .claude > project .warren > project .claude", () => {
    const w = makeWorld();
    const one = (who: string) => `---\nname: same\ndescription: from ${who}\n---\n${who}\n`;
    const dirs = {
      userClaude: path.join(w.home, ".claude", "agents"),
      userWarren: path.join(w.config, "warren", "agents"),
      projectClaude: path.join(w.project, ".claude", "agents"),
      projectWarren: path.join(w.project, ".warren", "agents"),
    };
    const load = () => loadAgentFiles(w.project, w.env);
    const winner = () => load().profiles.same?.description;
    put(dirs.projectClaude, "same.md", one("project .claude"));
    expect(winner()).toBe("from project .claude");
    put(dirs.projectWarren, "same.md", one("project .warren"));
    expect(winner()).toBe("from project .warren");
    expect(load().warnings).toEqual([]);
    // The person's own file of the same name wins; each project file is one line, shadowed.
    put(dirs.userClaude, "same.md", one("user .claude"));
    expect(winner()).toBe("from user .claude");
    expect(load().warnings).toEqual([
      `${path.join(dirs.projectWarren, "same.md")}:1: shadowed by your own agent file ${path.join(dirs.userClaude, "same.md")} of the same name; not used`,
      `${path.join(dirs.projectClaude, "same.md")}:1: shadowed by your own agent file ${path.join(dirs.userClaude, "same.md")} of the same name; not used`,
    ]);
    put(dirs.userWarren, "same.md", one("user warren"));
    expect(winner()).toBe("from user warren");
    // The config file's own profile wins over every agent file.
    const configFile = put(
      path.join(w.config, "warren"),
      "config.json",
      JSON.stringify({ profiles: { same: { system_prompt: "from config" } } }),
    );
    const config = loadConfig({ ...w.env, WARREN_CONFIG: configFile }, w.project);
    expect(config.profiles.same).toEqual({ system_prompt: "from config" });
    // A subdirectory of the project finds the project's files (the repository root's).
    const sub = path.join(w.project, "src");
    mkdirSync(sub);
    expect(loadAgentFiles(sub, w.env).profiles.same?.description).toBe("from user warren");
  });
});

describe("agent files end to end", () => {
  const database = useTestDatabase();
  let fake: FakeModel;
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('fork {profile: "reviewer"} from .claude/agents offers the child only the mapped tools', async () => {
    const w = makeWorld();
    put(path.join(w.project, ".claude", "agents"), "reviewer.md", REVIEWER);
    fake.script([
      {
        agent: "root",
        times: 1,
        reply: {
          toolCalls: [
            {
              name: "fork",
              arguments: { name: "rev", prompt: "Review the change.", profile: "reviewer" },
            },
            { name: "wait", arguments: { timeout: 30, from_agents: ["rev"] } },
          ],
        },
      },
      {
        agent: "rev",
        times: 1,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "LGTM" } }] },
      },
      { agent: "rev", times: 1, reply: { text: "Sent." } },
      { agent: "root", times: 1, reply: { text: "Reviewed." } },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: fake.baseURL });
    env.HOME = w.home;
    env.XDG_CONFIG_HOME = w.config;
    const run = await runWarren(["-p", "Review.", "--timeout", "60"], env, w.project);
    expect(run.code).toBe(0);
    // The unknown tool is one warning line on stderr, naming the file and line.
    expect(run.stderr.trim().split("\n")).toEqual([
      `warren: ${path.join(w.project, ".claude", "agents", "reviewer.md")}:4: tool "WebFetch" is not one warren has; ignored`,
    ]);
    const rootFirst = requestsOf(fake, "root")[0]!;
    const tools = rootFirst.body.tools as { function: { name: string; description: string } }[];
    const fork = tools.find((t) => t.function.name === "fork")!;
    expect(fork.function.description).toContain(
      "- reviewer: Reviews a change for bugs; read-only.",
    );
    const forked = lastToolResults(requestsOf(fake, "root")[1]!).find((r) => r.name === "fork");
    expect(forked?.value).toMatchObject({ name: "rev" });
    const child = requestsOf(fake, "rev")[0]!;
    expect(child.tools).toEqual(["glob", "grep", "read_file", "send", "wait"]);
    expect(child.systemPrompt).toMatch(/^You review code\. You never edit files\./);
    expect(
      requestsOf(fake, "root")
        .at(-1)!
        .messages.some((m) => m.content?.includes("LGTM")),
    ).toBe(true);
  });
  it("a fork with a profile that declares output_schema gets it; the fork's own wins", async () => {
    const w = makeWorld();
    put(path.join(w.project, ".warren", "agents"), "counter.md", COUNTER);
    const nameSchema = { type: "object", properties: { name: { type: "string" } } };
    const final = (message: string) => ({
      toolCalls: [{ name: "send", arguments: { to: "parent", message, final: true } }],
    });
    fake.script([
      {
        agent: "root",
        times: 1,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "a", prompt: "Count.", profile: "counter" } },
            {
              name: "fork",
              arguments: {
                name: "b",
                prompt: "Name it.",
                profile: "counter",
                output_schema: nameSchema,
              },
            },
            { name: "wait", arguments: { timeout: 30, from_agents: ["a", "b"] } },
          ],
        },
      },
      { agent: "a", times: 1, reply: final('{"count": 3}') },
      // Under the profile's schema this would be refused: the fork's schema is the one checked.
      { agent: "b", times: 1, reply: final('{"name": "x"}') },
      { agent: "root", times: 1, reply: { text: "Counted." } },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: fake.baseURL });
    env.HOME = w.home;
    env.XDG_CONFIG_HOME = w.config;
    const run = await runWarren(["-p", "Count.", "--timeout", "60"], env, w.project);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // Told its schema (stored as jsonb: the keys in the database's order).
    const told = (name: string) => requestsOf(fake, name)[0]!.systemPrompt;
    expect(told("a")).toContain("valid against this JSON Schema");
    expect(told("a")).toContain('"properties":{"count":{"type":"integer"}}');
    expect(told("b")).toContain('"properties":{"name":{"type":"string"}}');
    expect(told("b")).not.toContain('"count"');
    const waited = lastToolResults(requestsOf(fake, "root")[1]!).find((r) => r.name === "wait");
    expect(waited?.value).toMatchObject({
      results: [
        { name: "a", status: "received", final: true, result: { count: 3 } },
        { name: "b", status: "received", final: true, result: { name: "x" } },
      ],
    });
  });
});
