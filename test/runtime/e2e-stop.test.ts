// End to end: `warren stop AGENT` from another process interrupts a running `warren -p` tree's
// agent and its descendants; both stay alive (idle, `interrupted`), so the headless run settles.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { agentNamed, isFirst, kindsOf, requestsOf, useE2E } from "./e2e-support.js";

const e2e = useE2E();

async function until(what: string, probe: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("warren stop", () => {
  it("interrupts an agent and its running child; both stay alive", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "digger", prompt: "dig", context: "fresh" } },
          ],
        },
      },
      { agent: "root", reply: { hang: true } },
      { agent: "digger", reply: { hang: true } },
    ]);
    const run = e2e.prompt("start digging", { timeout: 60 });
    await until(
      "both model calls to hang",
      () => requestsOf(fake, "root").length >= 2 && requestsOf(fake, "digger").length >= 1,
    );
    const roots = await e2e
      .db()
      .execute<{ id: string }>(sql`select id from agents where parent_id is null`);
    const treeId = roots.rows[0]!.id;

    const stopped = await e2e.warren(["stop", "root", "--tree", treeId]);
    expect(stopped.stderr).toBe("");
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/^stopped 2 agents \(root [0-9a-f]{8} and its descendants\)\n$/);

    // The headless run ends because the whole tree went idle (not by its timeout).
    const done = await run;
    expect(done.code).toBe(0);
    for (const name of ["root", "digger"]) {
      const agent = await agentNamed(e2e.db(), treeId, name);
      expect(agent.state).toBe("idle");
      expect((await kindsOf(e2e.db(), agent.id)).at(-1)).toBe("interrupted");
    }
    const again = await e2e.warren(["stop", "root", "--tree", treeId]);
    expect(again.stdout).toMatch(/^stopped 0 agents/);
  });
});
