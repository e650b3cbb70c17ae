// `/fork --name` in a real terminal (tmux) refuses a name that could pass for someone else (issue
// 38 §4) with one line saying why, and forks nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { killAllTerminals, startTerminal, type Terminal } from "./tmux.js";

const database = useTestDatabase();
let model: FakeModel;
const terminals: Terminal[] = [];

beforeAll(async () => {
  model = await startFakeModel();
});
afterEach(async () => {
  await Promise.all(terminals.splice(0).map((t) => t.kill()));
});
afterAll(async () => {
  await killAllTerminals();
  await model.close();
});

describe("/fork --name in the TUI", { retry: 1 }, () => {
  it("refuses a reserved name, as typed or in look-alike letters, in one line", async () => {
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model.baseURL });
    const t = await startTerminal({ env, args: ["--new"], width: 110, height: 30 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    // Cyrillic о twice: `rооt` looks like `root`.
    await t.type("/fork --name r\u043e\u043et");
    await t.keys("Enter");
    await t.waitFor('name "r\\u043e\\u043et" can pass for "root", a reserved name; choose another');
    await t.type("/fork --name human");
    await t.keys("Enter");
    await t.waitFor('"human" is a reserved name; choose another');
    const ls = await runWarren(["ls", "--json"], env);
    const agents = JSON.parse(ls.stdout) as unknown[];
    expect(agents).toHaveLength(1);
    expect(t.stderr()).toBe("");
  });
});
