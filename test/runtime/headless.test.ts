// End to end through `bin/warren -p`: a real runtime, real Postgres, the fake model over HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { useTestDatabase } from "../support/db.js";
import { runWarren, warrenEnv } from "../support/warren.js";

const database = useTestDatabase();
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => {
  fake.assertAllUsed();
});

function env() {
  return warrenEnv({ databaseUrl: database().url, modelUrl: fake.baseURL });
}

describe("warren -p", () => {
  it("prints the root's answer", async () => {
    fake.script({ agent: "root", reply: { text: "hello from the model" } });
    const run = await runWarren(["-p", "say hello"], env());
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("hello from the model");
  });
});
