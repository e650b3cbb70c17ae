// A rewind that crashes half way (issue 43): in the middle of its file restore (the files created
// since removed, the checkpoint's not yet written back), or after the files and before the
// conversation's transaction. Running it again finishes it: the files exactly as the checkpoint,
// the conversation rewound once (one marker line, every later event marked), and a third run (its
// reply lost after commit) changes nothing. A running agent is refused, with nothing changed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { takeCheckpoint } from "../../src/agents/checkpoints.js";
import { getAgent } from "../../src/agents/refs.js";
import { rewindAgent, rewindTestHooks, RewindError } from "../../src/agents/rewind.js";
import { createTree } from "../../src/agents/tree.js";
import { useTestDatabase } from "../support/db.js";
import { g } from "../support/git.js";

const database = useTestDatabase();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  delete rewindTestHooks.afterRemove;
  delete rewindTestHooks.afterFiles;
});

const OPTIONS = { maxFileBytes: 1024 * 1024 };

function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) {
        if (d.name !== ".git") visit(r);
      } else out[r] = fs.readFileSync(path.join(dir, r), "utf8");
    }
  };
  visit("");
  return out;
}

/** An idle agent with two turns recorded, each after its checkpoint; files changed by each. */
async function twoTurns(name: string) {
  const { db } = database();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-rwcrash-")));
  dirs.push(dir);
  g(dir, "init", "-q", "-b", "main");
  g(dir, "config", "user.email", "t@example.com");
  g(dir, "config", "user.name", "t");
  fs.writeFileSync(path.join(dir, "a.txt"), "a0\n");
  g(dir, "add", "-A");
  g(dir, "commit", "-q", "-m", "init");
  const agent = await createTree(db, { name, cwd: dir });
  const turn = async (text: string, work: () => void) => {
    const start = await appendEvent(db, agent.id, "user", text);
    await takeCheckpoint(db, agent, start.id, OPTIONS);
    work();
    await appendEvent(db, agent.id, "assistant", `done ${text}`, { tool_calls: [] });
  };
  await turn("one", () => {
    fs.writeFileSync(path.join(dir, "a.txt"), "a1\n");
    fs.writeFileSync(path.join(dir, "b.txt"), "b1\n");
  });
  const after1 = files(dir);
  await turn("two", () => {
    fs.rmSync(path.join(dir, "b.txt"));
    fs.writeFileSync(path.join(dir, "a.txt"), "a2\n");
    fs.mkdirSync(path.join(dir, "n"));
    fs.writeFileSync(path.join(dir, "n", "c.txt"), "c2\n");
  });
  return { agent: (await getAgent(db, agent.id))!, dir, after1 };
}

async function conversationState(agentId: string) {
  const rows = await database().db.execute<{ content: string; rewound: boolean; kind: string }>(
    sql`select content, kind, rewound_at is not null as rewound from events
         where agent_id = ${agentId}::uuid order by id`,
  );
  return rows.rows;
}

describe("a rewind cut short", () => {
  it("in the middle of the file restore is finished by running it again", async () => {
    const { db } = database();
    const { agent, dir, after1 } = await twoTurns("cut-files");
    rewindTestHooks.afterRemove = () => {
      throw new Error("crash");
    };
    await expect(rewindAgent(db, agent, 2, "both", OPTIONS)).rejects.toThrow("crash");
    // Half done: the created file gone, the deleted one not back, the conversation untouched.
    expect(fs.existsSync(path.join(dir, "n", "c.txt"))).toBe(false);
    expect(fs.existsSync(path.join(dir, "b.txt"))).toBe(false);
    expect((await conversationState(agent.id)).some((e) => e.rewound)).toBe(false);
    delete rewindTestHooks.afterRemove;

    const done = await rewindAgent(db, agent, 2, "both", OPTIONS);
    expect(files(dir)).toEqual(after1);
    expect(done.rewoundEvents).toBe(2);
    const state = await conversationState(agent.id);
    expect(state.map((e) => [e.content, e.rewound])).toEqual([
      ["one", false],
      ["done one", false],
      ["two", true],
      ["done two", true],
      [expect.stringMatching(/rewound to before turn 2: 2 events folded/), false],
    ]);
  });

  it("between the files and the conversation is finished by running it again, once", async () => {
    const { db } = database();
    const { agent, dir, after1 } = await twoTurns("cut-conv");
    rewindTestHooks.afterFiles = () => {
      throw new Error("crash");
    };
    await expect(rewindAgent(db, agent, 2, "both", OPTIONS)).rejects.toThrow("crash");
    expect(files(dir)).toEqual(after1);
    expect((await conversationState(agent.id)).some((e) => e.rewound)).toBe(false);
    delete rewindTestHooks.afterFiles;

    await rewindAgent(db, agent, 2, "both", OPTIONS);
    // Its reply lost after commit: run once more; nothing changes, no second marker.
    const third = await rewindAgent(db, agent, 2, "both", OPTIONS);
    expect(third.rewoundEvents).toBe(0);
    expect(third.files?.written).toEqual([]);
    expect(third.files?.removed).toEqual([]);
    expect(files(dir)).toEqual(after1);
    const state = await conversationState(agent.id);
    expect(state.filter((e) => e.kind === "system")).toHaveLength(1);
    expect(state.filter((e) => e.rewound).map((e) => e.content)).toEqual(["two", "done two"]);
  });

  it("refuses a running agent and changes nothing", async () => {
    const { db } = database();
    const { agent, dir } = await twoTurns("cut-running");
    await db.execute(sql`update agents set state = 'running' where id = ${agent.id}::uuid`);
    const before = files(dir);
    const running = (await getAgent(db, agent.id))!;
    await expect(rewindAgent(db, running, 2, "both", OPTIONS)).rejects.toThrow(RewindError);
    await expect(rewindAgent(db, running, 2, "files", OPTIONS)).rejects.toThrow(/interrupt it/);
    expect(files(dir)).toEqual(before);
    expect((await conversationState(agent.id)).some((e) => e.rewound)).toBe(false);
  });
});
