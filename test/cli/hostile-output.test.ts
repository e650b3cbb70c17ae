// Agent text is data, never terminal control (SPEC §2, §4): names, messages and tool output with
// escape sequences are shown escaped by `ls`, `log`, `export` and error lines; `warren send`
// refuses a NUL with INVALID_ARGS. Runs the real bin/warren.
import { spawn } from "node:child_process";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { createTree } from "../../src/agents/tree.js";
import { useTestDatabase } from "../support/db.js";
import { BIN, warrenEnv, type WarrenRun } from "../support/warren.js";

const database = useTestDatabase();
// An agent name from before names were checked (or written by anything else): the screen-clearing,
// terminal-retitling name from the issue.
const EVIL = "x\u001b[2J\u001b]0;pwned\u0007";
const SHOWN = "x\\x1b[2J\\x1b]0;pwned\\x07";
let treeId: string;
let evilId: string;

function warren(args: string[], stdin?: string): Promise<WarrenRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: warrenEnv({ databaseUrl: database().url }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin ?? "");
  return new Promise((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** No raw ESC, BEL, CSI (C1) or other control character but newline anywhere in the output. */
function expectInert(text: string): void {
  // eslint-disable-next-line no-control-regex
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
}

beforeAll(async () => {
  const { db } = database();
  const root = await createTree(db, { name: "root" });
  treeId = root.id;
  const inserted = await db.execute<{ id: string }>(sql`
    insert into agents (tree_id, parent_id, name, depth, state, model)
    values (${root.id}, ${root.id}, ${EVIL}, 1, 'idle', ${"m\u009b31m"}) returning id`);
  evilId = inserted.rows[0]!.id;
  await appendEvent(db, evilId, "user", "task \u001b[31mred\u001b[0m\nline two\u0007");
  await appendEvent(db, evilId, "tool_call", `bash({"command":"printf '\\\\033c'"})`, {
    tool_call_id: "c1",
    name: "bash\u001b[1m",
    arguments: '{"command":"printf \'\\u001bc\'"}',
  });
  await appendEvent(db, evilId, "tool_result", "out: \u001bc\u009b2J", {
    tool_call_id: "c1",
    name: "bash",
  });
  await appendEvent(
    db,
    evilId,
    "mail_in",
    JSON.stringify({ from: root.id, from_name: EVIL, message: "m\u001b]8;;" }),
  );
});

describe("printing agent text", () => {
  it("warren ls shows the name escaped, literally", async () => {
    const run = await warren(["ls", "--tree", treeId]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(SHOWN);
    expectInert(run.stdout);
    const json = await warren(["ls", "--tree", treeId, "--json"]);
    expectInert(json.stdout);
    const parsed = JSON.parse(json.stdout) as { name: string; model: string | null }[];
    expect(parsed.map((a) => a.name)).toContain(EVIL); // JSON keeps the data, escaped
    expect(parsed.map((a) => a.model)).toContain("m\u009b31m");
  });

  it("warren log escapes names, content, tool names and results", async () => {
    const run = await warren(["log", evilId]);
    expect(run.code).toBe(0);
    expectInert(run.stdout);
    expect(run.stdout).toContain(SHOWN);
    expect(run.stdout).toContain("task \\x1b[31mred\\x1b[0m");
    expect(run.stdout).toContain("line two\\x07");
    expect(run.stdout).toContain("out: \\x1bc\\x9b2J");
    const json = await warren(["log", evilId, "--json"]);
    expectInert(json.stdout);
    expect(JSON.parse(json.stdout)).toHaveLength(4);
  });

  it("warren export (md and json) escapes everything it prints", async () => {
    const md = await warren(["export", treeId]);
    expect(md.code).toBe(0);
    expectInert(md.stdout);
    expect(md.stdout).toContain(SHOWN);
    expect(md.stdout).toContain("model m\\x9b31m");
    const json = await warren(["export", treeId, "--format", "json"]);
    expectInert(json.stdout);
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(EVIL).slice(1, -1));
  });

  it("error lines quote agent text escaped", async () => {
    const run = await warren(["log", `${EVIL}-missing`, "--tree", treeId]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`no agent "${SHOWN}-missing"`);
    expectInert(run.stderr);
  });
});

describe("warren send", () => {
  it("refuses a NUL in the message with a clear INVALID_ARGS line, never SQL", async () => {
    const run = await warren(["send", evilId, "-"], "hello\u0000world");
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("warren: message contains a NUL byte (\\x00) at character 6");
    const rows = await database().db.execute(sql`select count(*)::int as n from mail`);
    expect(rows.rows[0]).toEqual({ n: 0 });
  });

  it("stores quotes, backslashes, newlines and SQL as they are", async () => {
    const text = `it's "quoted" \\ back\nslash'); drop table mail; --`;
    const run = await warren(["send", evilId, "-"], text);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`sent mail #`);
    expect(run.stdout).toContain(SHOWN);
    expectInert(run.stdout);
    const rows = await database().db.execute<{ body: string }>(sql`select body from mail`);
    expect(rows.rows.map((r) => r.body)).toEqual([text]);
  });
});
