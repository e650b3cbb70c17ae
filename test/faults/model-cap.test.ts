// `kill -9` of a process holding a model-server slot (SPEC §3 "Model concurrency": a crashed holder
// cannot leak its slot). With `max_concurrent_requests: 1`, one `warren -p` holds the only slot in
// a request the server never answers; a second `warren -p` (another tree) queues behind it. The
// holder is killed with SIGKILL and nobody resumes its tree: the slot comes free when the dead
// holder's lease runs out, and the queued agent finishes.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { QUEUED_ACTIVITY } from "../../src/feed/types.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { useE2E } from "../runtime/e2e-support.js";
import type { RecordedRequest } from "../support/fake-model.js";

const e2e = useE2E();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

const says = (word: string) => (req: RecordedRequest) =>
  String(req.lastMessage?.content ?? "").includes(word);

describe("a slot holder killed with kill -9", () => {
  it("does not leak its slot: the queued agent of another process runs once the lease ends", async () => {
    const db = e2e.db();
    const fake = e2e.fake();
    fake.script([
      { match: says("hold"), reply: { hang: true }, times: Infinity, label: "the holder" },
      { match: says("proceed"), reply: { text: "proceeded" } },
    ]);
    const dir = mkdtempSync(path.join(os.tmpdir(), "warren-cap-kill-"));
    const configFile = path.join(dir, "config.json");
    writeFileSync(configFile, JSON.stringify({ max_concurrent_requests: 1, lease_seconds: 2 }));
    const env = () =>
      warrenEnv({
        databaseUrl: db.$client.options.connectionString!,
        modelUrl: fake.baseURL,
        extra: { WARREN_CONFIG: configFile },
      });
    const holder = startWarren(["-p", "hold", "--json", "--timeout", "120"], env());
    children.push(holder.child);
    await expect.poll(() => fake.inFlight.now, { timeout: 30_000 }).toBe(1);

    const waiter = startWarren(["-p", "proceed", "--json", "--timeout", "120"], env());
    children.push(waiter.child);
    const queued = async () =>
      (
        await db.execute<{ n: number }>(
          sql`select count(*)::int as n from agents where activity = ${QUEUED_ACTIVITY}`,
        )
      ).rows[0]!.n;
    await expect.poll(queued, { timeout: 30_000 }).toBe(1);

    holder.child.kill("SIGKILL");
    await holder.done;
    const ran = await waiter.done;
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ text: "proceeded" });
    // Never two requests at once, and the dead holder's tree was not resumed (no process runs
    // it): its slot was freed by its lease's end, not by a re-acquire of the same agent.
    expect(fake.inFlight.max).toBe(1);
    expect(fake.requests.filter(says("hold")).length).toBe(1);
    expect(fake.requests.filter(says("proceed")).length).toBe(1);
  }, 120_000);
});
