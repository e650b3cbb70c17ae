// Golden snapshot of what the model is sent after a takeover: the process running a root's `wait`
// is killed -9, mail arrives meanwhile, and a `warren worker` resumes the wait. The model must see
// one ordinary wait result, with no trace of the crash. UPDATE_GOLDEN=1 rewrites the snapshot.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, startWarren, warrenEnv } from "../support/warren.js";
import { expectGolden, normaliser, renderRequest } from "./golden-format.js";

const database = useTestDatabase();
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("what the model is sent after a takeover", () => {
  it("matches the golden snapshot of a resumed wait", async () => {
    const db = database().db;
    // Short leases so the crashed process's turn is taken over quickly.
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: fake.baseURL,
      extra: { WARREN_LEASE_SECONDS: "2" },
    });
    fake.script([
      {
        agent: "root",
        match: (req) => req.lastMessage?.role === "user",
        reply: {
          text: "Waiting for the go-ahead.",
          toolCalls: [{ id: "call_w1", name: "wait", arguments: { timeout: 60 } }],
        },
      },
      { agent: "root", match: (req) => req.lastMessage?.role === "tool", reply: { text: "Done." } },
    ]);

    const first = startWarren(["-p", "Wait for my go-ahead, then say Done."], env);
    const stateOfRoot = async () => {
      const rows = await db.execute<{ id: string; state: string }>(
        sql`select id, state from agents where parent_id is null order by created_at desc limit 1`,
      );
      return rows.rows[0];
    };
    const rootId = await until("the root to wait", async () => {
      const root = await stateOfRoot();
      return root?.state === "waiting" ? root.id : undefined;
    });
    first.child.kill("SIGKILL");
    await first.done;

    expect((await runWarren(["send", rootId, "Go ahead."], env)).code).toBe(0);
    const worker = startWarren(["worker"], env);
    await until("the resumed root to finish", async () =>
      (await stateOfRoot())?.state === "idle" ? true : undefined,
    );
    worker.child.kill("SIGTERM");
    await worker.done;
    fake.assertAllUsed();

    const resumed = fake.requests.at(-1)!;
    const normalise = normaliser({ root: rootId }, process.cwd());
    expectGolden(
      "takeover-resumed-wait.md",
      renderRequest("The root after its wait was resumed by another process", resumed, normalise),
    );
  });
});
