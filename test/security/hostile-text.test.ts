// Hostile text from a model (issue 7 §8, SPEC §2, §4): names and messages with quotes,
// backslashes, newlines, NUL, SQL, terminal escape sequences and blessed tags, passed through the
// tools by the fake model, are stored exactly or refused with INVALID_ARGS (never INTERNAL, never
// SQL), and `warren ls`, `log`, `export` show them without a raw escape byte. Real bin/warren.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeModel, type FakeModel, type ScriptedToolCall } from "../support/fake-model.js";
import {
  after,
  isFirst,
  lastToolResults,
  mailOf,
  requestsOf,
  treeAgents,
  useE2E,
  type PromptJson,
} from "../runtime/e2e-support.js";

const e2e = useE2E();

const ESCAPES = "x\u001b[2J\u001b]0;pwned\u0007";
const ESCAPES_SHOWN = "x\\x1b[2J\\x1b]0;pwned\\x07";
const SQL = "'; drop table agents; --";

/** Names the model tries, and whether SPEC §2 stores or refuses each. */
const NAMES: { name: string; stored: boolean }[] = [
  { name: `quote"s 'and' \\back\\slash`, stored: true },
  { name: SQL, stored: true },
  { name: "{bold}tag{/bold}", stored: true },
  { name: "名前 ✓", stored: true },
  { name: ESCAPES, stored: false },
  { name: "nul\u0000name", stored: false },
  { name: "line\nbreak", stored: false },
  { name: "tab\tname", stored: false },
  { name: "c1\u009bname", stored: false },
  { name: "x".repeat(65), stored: false },
];
const STORED = NAMES.filter((n) => n.stored).map((n) => n.name);

/** Messages the model sends to the child named SQL. */
const MESSAGES: { body: string; stored: boolean }[] = [
  { body: SQL, stored: true },
  { body: `esc ${ESCAPES} {bold}b{/bold} "q" \\ and\na newline`, stored: true },
  { body: "nul \u0000 here", stored: false },
];

let run: Awaited<ReturnType<typeof e2e.prompt>> & { json?: PromptJson };
let treeId: string;
/** The model of the one shared run (useE2E's per-test fake exists only inside a test). */
let fake: FakeModel;

// Forbidden in any printed line: ESC, BEL, C1 controls and every C0 control except newline.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

beforeAll(async () => {
  fake = await startFakeModel();
  const forks: ScriptedToolCall[] = NAMES.map(({ name }) => ({
    name: "fork",
    arguments: { name, prompt: `task for ${name}`, context: "fresh" },
  }));
  fake.script([
    { agent: "root", match: isFirst, reply: { toolCalls: forks } },
    {
      agent: "root",
      match: after("fork"),
      reply: {
        toolCalls: [
          ...MESSAGES.map(({ body }) => ({ name: "send", arguments: { to: SQL, message: body } })),
          { name: "bash", arguments: { command: "printf 'tool \\033[2J\\033]0;pwned\\007 out'" } },
        ],
      },
    },
    { agent: "root", match: after("bash"), reply: { text: `done ${ESCAPES}` } },
    // The root reads its children's results (their final text, mailed to it) and answers the same.
    { agent: "root", reply: { text: `done ${ESCAPES}` }, times: Infinity },
    // Every child (on its task, and again when mail wakes it) just answers.
    {
      match: (req) => !req.systemPrompt?.includes("Your name: root"),
      reply: { text: "ok" },
      times: Infinity,
    },
  ]);
  run = await e2e.prompt("hostile names and messages", { timeout: 90, modelUrl: fake.baseURL });
  treeId = run.json!.tree_id;
  fake.assertAllUsed();
}, 120_000);
afterAll(async () => {
  await fake?.close();
});

describe("hostile text through the tools", () => {
  it("fork stores allowed names exactly and refuses the others with INVALID_ARGS", async () => {
    expect(run.code, run.stderr).toBe(0);
    const results = lastToolResults(requestsOf(fake, "root")[1]!);
    expect(results.map((r) => r.name)).toEqual(NAMES.map(() => "fork"));
    results.forEach((result, i) => {
      const { name, stored } = NAMES[i]!;
      const value = result.value as { name?: string; error?: { code: string; message: string } };
      if (stored) {
        expect(value.name, JSON.stringify(name)).toBe(name);
      } else {
        expect(value.error?.code, JSON.stringify(name)).toBe("INVALID_ARGS");
        expect(value.error?.message).toMatch(/^\/?name /);
        expect(value.error?.message).not.toMatch(/insert|select|failed query|invalid byte/i);
      }
    });
    const names = (await treeAgents(e2e.db(), treeId)).map((a) => a.name).sort();
    expect(names).toEqual(["root", ...STORED].sort());
    // The SQL in a name was data: the table is still there and whole.
    const count = await e2e.db().execute<{ n: number }>(sql`select count(*)::int as n from agents`);
    expect(count.rows[0]!.n).toBeGreaterThanOrEqual(STORED.length + 1);
  });

  it("send stores messages exactly (escapes included) and refuses a NUL with INVALID_ARGS", async () => {
    const results = lastToolResults(requestsOf(fake, "root")[2]!).slice(0, MESSAGES.length);
    results.forEach((result, i) => {
      const value = result.value as { status?: string; error?: { code: string; message: string } };
      if (MESSAGES[i]!.stored) expect(value.status).toBe("sent");
      else {
        expect(value.error?.code).toBe("INVALID_ARGS");
        expect(value.error?.message).toMatch(/NUL/);
      }
    });
    // Calls of one response run concurrently: the order of the rows is not fixed.
    // (The children's final answers, mailed to the root as their results, are not these.)
    const bodies = (await mailOf(e2e.db(), treeId))
      .filter((m) => !m.final)
      .map((m) => m.body)
      .sort();
    expect(bodies).toEqual(
      MESSAGES.filter((m) => m.stored)
        .map((m) => m.body)
        .sort(),
    );
  });
});

describe("hostile text on the screen", () => {
  it("warren ls shows every stored name, blessed tags literally, no raw control byte", async () => {
    const ls = await e2e.warren(["ls", "--tree", treeId]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).not.toMatch(RAW_CONTROL);
    for (const name of STORED) expect(ls.stdout).toContain(name);
    const json = await e2e.warren(["ls", "--tree", treeId, "--json"]);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    const listed = (JSON.parse(json.stdout) as { name: string }[]).map((a) => a.name).sort();
    expect(listed).toEqual(["root", ...STORED].sort());
  });

  it("warren log shows mail and tool output with escapes made visible", async () => {
    const child = await e2e.warren(["log", "--tree", treeId, SQL]);
    expect(child.code, child.stderr).toBe(0);
    expect(child.stdout).not.toMatch(RAW_CONTROL);
    expect(child.stdout).toContain(ESCAPES_SHOWN);
    expect(child.stdout).toContain("{bold}b{/bold}");
    expect(child.stdout).toContain(SQL);
    const root = await e2e.warren(["log", "--tree", treeId, "root"]);
    expect(root.stdout).not.toMatch(RAW_CONTROL);
    // Tool results are JSON text: the bytes arrive as JSON's own escapes.
    expect(root.stdout).toContain('"output":"tool \\u001b[2J\\u001b]0;pwned\\u0007 out"');
    expect(root.stdout).toContain(`done ${ESCAPES_SHOWN}`);
  });

  it("warren export (md and json) keeps every text, escaped, with no raw control byte", async () => {
    const md = await e2e.warren(["export", treeId]);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).not.toMatch(RAW_CONTROL);
    expect(md.stdout).toContain(ESCAPES_SHOWN);
    for (const name of STORED) expect(md.stdout).toContain(name);
    const json = await e2e.warren(["export", treeId, "--format", "json"]);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    // JSON escapes the bytes itself: parsed back, nothing was lost or altered.
    const text = JSON.stringify(JSON.parse(json.stdout));
    for (const { body } of MESSAGES.filter((m) => m.stored)) {
      expect(text).toContain(JSON.stringify(body).slice(1, -1));
    }
  });

  it("warren -p prints the root's answer escaped", () => {
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.json!.text).toBe(`done ${ESCAPES}`);
  });
});

describe("names unique among living children (SPEC §2)", () => {
  // The protection: forkAgentIn counts living children of that name under the root lock.
  it("a second fork with a living child's name is refused", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "twin", prompt: "one", context: "fresh" } },
            { name: "fork", arguments: { name: "twin", prompt: "two", context: "fresh" } },
          ],
        },
      },
      { agent: "root", match: after("fork"), reply: { text: "forked" } },
      { agent: "root", reply: { text: "read twin's result" }, times: Infinity },
      { agent: "twin", reply: { text: "ok" }, times: Infinity },
    ]);
    const again = await e2e.prompt("fork twins");
    const results = lastToolResults(requestsOf(fake, "root")[1]!);
    const codes = results.map((r) => (r.value as { error?: { code: string } }).error?.code ?? "ok");
    // One fork succeeds; the other is refused with an error code (SPEC names none; INVALID_ARGS fits).
    expect(codes.filter((code) => code === "ok")).toHaveLength(1);
    const twins = (await treeAgents(e2e.db(), again.json!.tree_id)).filter(
      (a) => a.name === "twin",
    );
    expect(twins).toHaveLength(1);
  });
});
