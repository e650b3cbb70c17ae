// What every tmux test file of the TUI shares: a test database, a fresh fake model for each test
// (and each retry of one: a failed attempt's unused rules cannot fail the next test), and the
// terminals a test opens, killed after it (their tmux servers after the file).
import { afterAll, afterEach, beforeEach } from "vitest";
import { useTestDatabase } from "../support/db.js";
import { startFakeModel, type FakeModel } from "../support/fake-model.js";
import { killAllTerminals, type Terminal } from "./tmux.js";

export function useTuiSuite() {
  const database = useTestDatabase();
  let fake: FakeModel | undefined;
  /** Push each terminal a test opens: it is killed after the test. */
  const terminals: Terminal[] = [];
  beforeEach(async () => {
    fake = await startFakeModel();
  });
  afterEach(async () => {
    await Promise.all(terminals.splice(0).map((t) => t.kill()));
    await fake?.close();
    fake = undefined;
  });
  afterAll(async () => {
    await killAllTerminals();
  });
  const model = (): FakeModel => {
    if (!fake) throw new Error("the fake model exists only inside a test");
    return fake;
  };
  return { database, model, terminals };
}
