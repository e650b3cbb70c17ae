// End to end through `bin/warren -p` and the fake model: a child's result in one request (issue
// 42) — its final text mailed to its parent, `send {final: true}` ending its turn — and
// structured results (fork's output_schema: an invalid send refused, a valid one parsed; `-p
// --output-schema`: the root's answer checked, sent back once, stdout the JSON value).
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  after,
  agentNamed,
  eventsOf,
  forkedIds,
  isFirst,
  lastToolResults,
  lastUserStartsWith,
  mailOf,
  requestsOf,
  useE2E,
} from "./e2e-support.js";

const e2e = useE2E();

/** The root forks `names` with `extra` fork arguments, then waits for them all. */
function rootScript(names: string[], extra: Record<string, unknown> = {}) {
  return [
    {
      agent: "root",
      match: isFirst,
      reply: {
        toolCalls: names.map((name) => ({
          name: "fork",
          arguments: { name, prompt: `do part ${name}`, context: "fresh", ...extra },
        })),
      },
    },
    {
      agent: "root",
      match: after("fork"),
      reply: () => ({
        toolCalls: [{ name: "wait", arguments: { timeout: 30, from_agents: names } }],
      }),
    },
    { agent: "root", match: after("wait"), reply: { text: "collected" } },
  ];
}

describe("a result in one request", () => {
  it("a child that answers with text reaches its waiting parent as received, once, marked final", async () => {
    const fake = e2e.fake();
    const names = ["alpha", "beta"];
    fake.script([
      ...rootScript(names),
      ...names.map((name) => ({
        agent: name,
        match: isFirst,
        reply: { text: `answer of ${name}` },
      })),
    ]);
    const run = await e2e.prompt("split the work");
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("collected");
    const [, afterFork, afterWait] = requestsOf(fake, "root");
    const ids = forkedIds(afterFork!);
    expect(lastToolResults(afterWait!)[0]!.value).toEqual({
      results: names.map((name) => ({
        agent_id: ids[name],
        name,
        status: "received",
        message: `answer of ${name}`,
        final: true,
      })),
    });
    // One request per child, and exactly one mail each (final), consumed by the wait.
    for (const name of names) expect(requestsOf(fake, name)).toHaveLength(1);
    const mail = await mailOf(e2e.db(), run.json!.tree_id);
    expect(mail.map((m) => [m.body, m.final, m.consumed_at !== null]).sort()).toEqual([
      ["answer of alpha", true, true],
      ["answer of beta", true, true],
    ]);
    const alpha = await agentNamed(e2e.db(), run.json!.tree_id, "alpha");
    const outs = (await eventsOf(e2e.db(), alpha.id)).filter((e) => e.kind === "mail_out");
    expect(outs).toHaveLength(1);
    expect(alpha.state).toBe("idle");
  });

  it("send {final: true} ends the child's turn: no request after its tool result", async () => {
    const fake = e2e.fake();
    fake.script([
      ...rootScript(["solo"]),
      {
        agent: "solo",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "42", final: true } }],
        },
      },
    ]);
    const run = await e2e.prompt("ask solo");
    expect(run.stderr).toBe("");
    expect(requestsOf(fake, "solo")).toHaveLength(1);
    const [, , afterWait] = requestsOf(fake, "root");
    expect(lastToolResults(afterWait!)[0]!.value).toMatchObject({
      results: [{ name: "solo", status: "received", message: "42" }],
    });
    // It sent its parent mail in that turn: its (absent) final text is not mailed as well.
    expect(await mailOf(e2e.db(), run.json!.tree_id)).toHaveLength(1);
  });

  it("a child that sent its parent mail in the turn does not mail its final text too", async () => {
    const fake = e2e.fake();
    fake.script([
      ...rootScript(["old"]),
      {
        agent: "old",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "send", arguments: { to: "parent", message: "the result" } }],
        },
      },
      { agent: "old", match: after("send"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("ask old");
    expect(run.stderr).toBe("");
    const mail = await mailOf(e2e.db(), run.json!.tree_id);
    expect(mail.map((m) => [m.body, m.final])).toEqual([["the result", false]]);
  });
});

describe("fork output_schema", () => {
  const schema = {
    type: "object",
    properties: { count: { type: "integer" } },
    required: ["count"],
    additionalProperties: false,
  };

  it("refuses an invalid send with each bad field's path; a valid one is the wait's result", async () => {
    const fake = e2e.fake();
    fake.script([
      ...rootScript(["counter"], { output_schema: schema }),
      {
        agent: "counter",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "send", arguments: { to: "parent", message: '{"count":"3","x":1}' } },
          ],
        },
      },
      {
        agent: "counter",
        match: after("send"),
        reply: (req) =>
          lastToolResults(req)[0]!.value &&
          JSON.stringify(lastToolResults(req)[0]!.value).includes("error")
            ? {
                toolCalls: [
                  {
                    name: "send",
                    arguments: { to: "parent", message: '{"count":3}', final: true },
                  },
                ],
              }
            : { text: "unexpected" },
      },
    ]);
    const run = await e2e.prompt("count");
    expect(run.stderr).toBe("");
    const [first, second] = requestsOf(fake, "counter");
    expect(requestsOf(fake, "counter")).toHaveLength(2);
    // Told the schema in its framing.
    expect(JSON.stringify(first!.messages)).toContain("valid against this JSON");
    expect(lastToolResults(second!)[0]!.value).toEqual({
      error: {
        code: "INVALID_ARGS",
        message:
          "/message does not match your output_schema: /x is not a known field; /count must be integer",
      },
    });
    const [, , afterWait] = requestsOf(fake, "root");
    expect(lastToolResults(afterWait!)[0]!.value).toMatchObject({
      results: [
        { name: "counter", status: "received", message: '{"count":3}', result: { count: 3 } },
      ],
    });
  });

  it("final text that matches is the result; a child without one is reminded once, then failed", async () => {
    const fake = e2e.fake();
    fake.script([
      ...rootScript(["good", "bad"], { output_schema: schema }),
      { agent: "good", match: isFirst, reply: { text: '```json\n{"count": 5}\n```' } },
      { agent: "bad", match: isFirst, reply: { text: "I counted five." } },
      {
        agent: "bad",
        match: (req) =>
          String(req.lastMessage?.content ?? "").startsWith("Your turn ended without"),
        reply: { text: "Still five." },
      },
    ]);
    const run = await e2e.prompt("count twice");
    // -p names a failed agent on stderr, as for any failure.
    expect(run.stderr).toMatch(/agent bad \S+ failed: no result matching output_schema/);
    expect(requestsOf(fake, "good")).toHaveLength(1);
    const bad = requestsOf(fake, "bad");
    expect(bad).toHaveLength(2);
    expect(String(bad[1]!.lastMessage?.content)).toContain(
      "/ the message is not one JSON value".slice(2),
    );
    const [, , afterWait] = requestsOf(fake, "root");
    expect(lastToolResults(afterWait!)[0]!.value).toMatchObject({
      results: [
        { name: "good", status: "received", final: true, result: { count: 5 } },
        { name: "bad", status: "failed", error: "no result matching output_schema" },
      ],
    });
  });

  it("a schema ajv rejects is INVALID_ARGS on the fork, and no child is made", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            {
              name: "fork",
              arguments: { name: "bad", prompt: "p", output_schema: { type: "nonsense" } },
            },
          ],
        },
      },
      { agent: "root", match: after("fork"), reply: { text: "ok" } },
    ]);
    const run = await e2e.prompt("fork badly");
    const [, second] = requestsOf(fake, "root");
    expect(lastToolResults(second!)[0]!.value).toMatchObject({
      error: {
        code: "INVALID_ARGS",
        message: expect.stringMatching(/^\/output_schema: invalid JSON Schema/),
      },
    });
    expect(run.json?.text).toBe("ok");
  });
});

describe("warren -p --output-schema", () => {
  const schema = {
    type: "object",
    properties: { count: { type: "integer" } },
    required: ["count"],
    additionalProperties: false,
  };
  const schemaFile = (content: string) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "warren-schema-"));
    const file = path.join(dir, "schema.json");
    writeFileSync(file, content);
    return file;
  };
  const REPAIR = "Your answer does not match the output schema";
  const run = (json: boolean, file = schemaFile(JSON.stringify(schema))) =>
    e2e.warren([
      "-p",
      "count the files",
      "--output-schema",
      file,
      "--timeout",
      "60",
      ...(json ? ["--json"] : []),
    ]);

  it("a valid answer the first time: stdout is the JSON value alone; --json gains result", async () => {
    const fake = e2e.fake();
    fake.script([{ agent: "root", match: isFirst, reply: { text: '```json\n{"count": 7}\n```' } }]);
    const plain = await run(false);
    expect(plain.stderr).toBe("");
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('{"count":7}\n');
    // The root is told the schema, after its prompt.
    const [told] = requestsOf(fake, "root");
    expect(String(told!.lastMessage?.content)).toContain(
      `valid against this JSON Schema; a reply that is not is sent back to you once with the errors:\n${JSON.stringify(schema)}`,
    );
    expect(requestsOf(fake, "root")).toHaveLength(1);

    fake.script([{ agent: "root", match: isFirst, reply: { text: '{"count": 8}' } }]);
    const json = await run(true);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout) as { result: unknown; text: string };
    expect(out.result).toEqual({ count: 8 });
    expect(out.text).toBe('{"count": 8}');
  });

  it("an answer that does not match is sent back once with the errors; the repair is the output", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: lastUserStartsWith("count the files"),
        reply: { text: '{"count":"7","x":1}' },
      },
      { agent: "root", match: lastUserStartsWith(REPAIR), reply: { text: '{"count": 7}' } },
    ]);
    const result = await run(false);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('{"count":7}\n');
    const requests = requestsOf(fake, "root");
    expect(requests).toHaveLength(2);
    expect(String(requests[1]!.lastMessage?.content)).toBe(
      `${REPAIR}: /x is not a known field; /count must be integer. Reply with one JSON value ` +
        "(JSON only, no other text) valid against the schema.",
    );
  });

  it("a repair that fails too: exit 1, the errors on stderr, nothing on stdout", async () => {
    const fake = e2e.fake();
    fake.script([
      { agent: "root", match: lastUserStartsWith("count the files"), reply: { text: "seven" } },
      { agent: "root", match: lastUserStartsWith(REPAIR), reply: { text: '{"count": 7.5}' } },
    ]);
    const result = await run(false);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      "warren: the answer does not match --output-schema: /count must be integer\n",
    );
    expect(String(requestsOf(fake, "root")[1]!.lastMessage?.content)).toContain(
      "the message is not one JSON value",
    );
    // With --json the object is printed all the same, with the error and no result.
    fake.script([
      { agent: "root", match: lastUserStartsWith("count the files"), reply: { text: "seven" } },
      { agent: "root", match: lastUserStartsWith(REPAIR), reply: { text: "still seven" } },
    ]);
    const json = await run(true);
    expect(json.code).toBe(1);
    const out = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(out.error).toBe(
      "the answer does not match --output-schema: the message is not one JSON value (it must be JSON only)",
    );
    expect(out).not.toHaveProperty("result");
  });

  it("a bad schema file is one line and exit 2, before any model request", async () => {
    const fake = e2e.fake();
    for (const [content, line] of [
      ["{nope", /^warren: --output-schema \S+: not JSON: .+\n$/],
      ['{"type": "nonsense"}', /^warren: --output-schema \S+: invalid JSON Schema: .+\n$/],
    ] as const) {
      const result = await run(false, schemaFile(content));
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(line);
    }
    const missing = await run(false, "/nonexistent/schema.json");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "warren: --output-schema /nonexistent/schema.json: cannot read: ENOENT\n",
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe("a plain wait's entry", () => {
  const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };

  /** The root forks `child` (with `extra`), then waits for the oldest mail after `delayMs`. */
  function plainWaitScript(extra: Record<string, unknown>, delayMs = 0) {
    return [
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            {
              name: "fork",
              arguments: { name: "child", prompt: "go", context: "fresh", ...extra },
            },
          ],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 30 } }], delayMs },
      },
      { agent: "root", match: after("wait"), reply: { text: "got it" } },
    ];
  }

  /** Runs the prompt; what the root's wait returned, and who sent it (the child). */
  async function askChild(fake: ReturnType<typeof e2e.fake>) {
    const run = await e2e.prompt("ask the child");
    expect(run.stderr).toBe("");
    const [, afterFork, afterWait] = requestsOf(fake, "root");
    const sender = { from: forkedIds(afterFork!).child, from_name: "child" };
    return { run, sender, value: lastToolResults(afterWait!)[0]!.value };
  }

  it("carries final and result for mail waiting in the mailbox (a final send under a schema)", async () => {
    const fake = e2e.fake();
    fake.script([
      // The root asks for its wait only once the child's mail is in (the take, not a handoff).
      ...plainWaitScript({ output_schema: schema }, 1500),
      {
        agent: "child",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "send", arguments: { to: "parent", message: '{"n": 4}', final: true } },
          ],
        },
      },
    ]);
    const { sender, value } = await askChild(fake);
    expect(value).toEqual({ ...sender, message: '{"n": 4}', final: true, result: { n: 4 } });
  });

  it("carries final (no result without a schema) for final text handed to a blocked wait", async () => {
    const fake = e2e.fake();
    fake.script([
      ...plainWaitScript({}),
      // Answers once the root is blocked in its wait: the send hands the mail over (handoff.ts).
      { agent: "child", match: isFirst, reply: { text: "four", delayMs: 1500 } },
    ]);
    const { run, sender, value } = await askChild(fake);
    expect(value).toEqual({ ...sender, message: "four", final: true });
    const mail = await mailOf(e2e.db(), run.json!.tree_id);
    expect(mail.map((m) => [m.body, m.final])).toEqual([["four", true]]);
  });

  it("a result handed to a blocked wait, and a send that is not final carries neither mark", async () => {
    const fake = e2e.fake();
    fake.script([
      ...plainWaitScript({ output_schema: schema }),
      {
        agent: "child",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "send", arguments: { to: "parent", message: '{"n": 5}' } }],
          delayMs: 1500,
        },
      },
      { agent: "child", match: after("send"), reply: { text: "" } },
    ]);
    const { value } = await askChild(fake);
    expect(value).toMatchObject({ message: '{"n": 5}', result: { n: 5 } });
    expect(value).not.toHaveProperty("final");
  });
});
