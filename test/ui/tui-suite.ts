// What every tmux test file of the TUI shares: a test database, a fake model for the file, and
// the terminals it opens, killed after each test (their tmux servers after the file).
import { afterAll, afterEach, beforeAll } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { killAllTerminals, type Terminal } from "./tmux.js";

export function useTuiSuite() {
  const database = useTestDatabase();
  let fake: FakeModel | undefined;
  /** Push each terminal a test opens: it is killed after the test. */
  const terminals: Terminal[] = [];
  beforeAll(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await Promise.all(terminals.splice(0).map((t) => t.kill()));
  });
  afterAll(async () => {
    await killAllTerminals();
    await fake?.close();
  });
  const model = (): FakeModel => {
    if (!fake) throw new Error("the fake model exists only inside the file's tests");
    return fake;
  };
  return { database, model, terminals };
}
