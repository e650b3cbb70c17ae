// Property-based fuzzing (fast-check) of every tool's arguments and of agent references: hostile
// JSON (wrong types, NUL, lone surrogates, control characters, SQL, huge numbers) is answered
// with an error code the model can act on — never INTERNAL, never a throw, never a crash.
// `bash` is fuzzed twice, and never runs a fuzzed command: its whole argument object through an
// already interrupted context (validation runs, then it returns before spawning anything), and
// fuzzed text only as one shell-quoted argument of `printf` in a temp directory (so the spawn
// path sees NUL, surrogates and escapes, but the command is always that printf).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAgentError } from "../../src/agents/errors.js";
import { bashTool } from "../../src/tools/bash.js";
import { resolveAgentRef } from "../../src/agents/refs.js";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { editFileTool } from "../../src/tools/edit-file.js";
import { forkTool } from "../../src/tools/fork.js";
import { globTool } from "../../src/tools/glob.js";
import { grepTool } from "../../src/tools/grep.js";
import { killTool } from "../../src/tools/kill.js";
import { readFileTool } from "../../src/tools/read-file.js";
import { sendTool } from "../../src/tools/send.js";
import type { ToolOutcome } from "../../src/tools/tool.js";
import { waitTool } from "../../src/tools/wait.js";
import { writeFileTool } from "../../src/tools/write-file.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);
const RUNS = 150;
let treeId: string;
let childId: string;
let dir: string;

beforeAll(async () => {
  const { db } = database();
  const root = await createTree(db, { name: "root" });
  treeId = root.id;
  childId = (await forkAgent(db, root.id, { name: "child" })).id;
  await forkAgent(db, childId, { name: "grandchild" });
  dir = await mkdtemp(path.join(tmpdir(), "warren-fuzz-"));
  await writeFile(path.join(dir, "a.txt"), "alpha\nbeta\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Strings a model might send: any code units (NUL, lone surrogates, C1), SQL, names, ids. */
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "parent",
    "child",
    "grandchild",
    "root",
    "'; drop table agents; --",
    "\u0000",
    "\ud800",
    "x\u001b[2J\u001b]0;pwned\u0007",
    "0000",
    "ffff-",
    "%",
    "_",
    "\\",
  ),
);
const ref = fc.oneof(text, fc.uuid().map(String));
const value = fc.oneof(
  text,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(text, { maxLength: 3 }),
  fc.dictionary(text, text, { maxKeys: 2 }),
);

function args(fields: Record<string, fc.Arbitrary<unknown>>) {
  return fc.oneof(
    fc.record(fields, { requiredKeys: [] }),
    fc.dictionary(fc.oneof(text, fc.constantFrom(...Object.keys(fields))), value, { maxKeys: 4 }),
    fc.anything(),
  );
}

function acceptable(outcome: ToolOutcome): boolean {
  return outcome.ok || outcome.error.code !== "INTERNAL";
}

async function fuzz(
  tool: { name: string; run(args: unknown, ctx: never): Promise<ToolOutcome> },
  arb: fc.Arbitrary<unknown>,
  prepare: (input: unknown) => unknown = (input) => input,
  fromId?: () => string,
  options: { signal?: AbortSignal; runs?: number } = {},
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arb, async (input) => {
      const ctx = await toolContext(database().db, bus(), fromId?.() ?? treeId, {
        cwd: dir,
        ...(options.signal && { signal: options.signal }),
      });
      const outcome = await tool.run(prepare(input), ctx as never);
      if (!acceptable(outcome)) throw new Error(`${tool.name}: ${JSON.stringify(outcome)}`);
    }),
    { numRuns: options.runs ?? RUNS },
  );
}

/** `text` as one single-quoted shell word: bash reads it back verbatim, never as code. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

describe("fuzzed tool arguments", () => {
  it("fork", () =>
    fuzz(
      forkTool,
      args({
        name: text,
        prompt: text,
        profile: value,
        context: fc.oneof(value, fc.constantFrom("inherit", "fresh")),
        budget: value,
      }),
    ));

  it("send", () => fuzz(sendTool, args({ to: ref, message: text })));

  it("wait (never blocking)", () =>
    fuzz(
      waitTool,
      args({ timeout: value, from_agents: fc.oneof(value, fc.array(ref, { maxLength: 3 })) }),
      // A positive timeout would block: the property is about arguments, so check at once.
      (input) => {
        if (!input || typeof input !== "object" || Array.isArray(input)) return input;
        const t = (input as { timeout?: unknown }).timeout;
        return typeof t === "number" && t > 0 && t <= 3600 ? { ...input, timeout: 0 } : input;
      },
    ));

  it("kill (from a child, so the tree survives)", () =>
    fuzz(killTool, args({ agent_id: ref }), undefined, () => childId));

  it("read_file, glob, grep", async () => {
    await fuzz(readFileTool, args({ path: text, offset: value, limit: value }));
    await fuzz(globTool, args({ pattern: text, path: text }));
    await fuzz(grepTool, args({ pattern: text, path: text, glob: text, ignore_case: value }));
  });

  it("bash: argument validation (an interrupted context, so nothing is spawned)", () => {
    const interrupted = new AbortController();
    interrupted.abort();
    return fuzz(bashTool, args({ command: text, timeout: value }), undefined, undefined, {
      signal: interrupted.signal,
    });
  });

  it("bash: hostile text reaches the spawn only as printf's quoted argument", () =>
    fuzz(
      bashTool,
      fc.record({ text, timeout: fc.constantFrom(undefined, 5, 0.5) }),
      (input) => {
        const { text: word, timeout } = input as { text: string; timeout?: number };
        return { command: `printf %s ${shellQuoted(word)}`, timeout };
      },
      undefined,
      { runs: 60 },
    ));

  it("write_file and edit_file (names kept inside the temp directory)", async () => {
    const name = fc.stringMatching(/^[a-z]{1,8}\.txt$/);
    await fuzz(writeFileTool, args({ path: name, content: text }));
    await fuzz(editFileTool, args({ path: name, old_string: text, new_string: text }));
  });
});

describe("fuzzed references", () => {
  it("resolve or fail with UNKNOWN_AGENT / INVALID_ARGS, never a database error", async () => {
    await fc.assert(
      fc.asyncProperty(ref, async (input) => {
        try {
          await resolveAgentRef(database().db, { treeId, selfId: childId }, input);
        } catch (err) {
          if (!isAgentError(err) || err.code === "INTERNAL") throw err;
        }
      }),
      { numRuns: 400 },
    );
  });

  it("leave the tree consistent: no mail or agent beyond what the successes made", async () => {
    const rows = await database().db.execute<{ bad: number }>(sql`
      select count(*)::int as bad from agents c join agents p on p.id = c.parent_id
       where c.tree_id = ${treeId} and c.state <> 'dead' and p.state = 'dead'`);
    expect(rows.rows[0]!.bad).toBe(0);
  });
});
