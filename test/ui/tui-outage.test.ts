// The TUI in a real terminal (tmux) while its database goes away and comes back: the status bar
// says it is reconnecting, a message typed meanwhile is not lost, and the TUI carries on.
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type RecordedRequest } from "../support/fake-model.js";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

// Registered after the suite's hooks, so it runs before the terminals are killed.
afterEach(async () => {
  await setConnections(true);
});

/** Refuses (and cuts) or allows again every connection to the test's database. */
async function setConnections(allow: boolean): Promise<void> {
  const name = new URL(database().url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: inject("testDatabaseAdminUrl") });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${allow ? "true" : "false"}`);
    if (!allow) {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [name],
      );
    }
  } finally {
    await admin.end();
  }
}

const lastUser = (text: string) => (req: RecordedRequest) =>
  req.lastMessage?.role === "user" && req.lastMessage.content === text;

// A real terminal on a shared 2-core machine: one retry absorbs a timing hiccup (a persistent
// failure still fails); each retry shows in the run's output.
describe("the TUI when the database goes away", { retry: 1 }, () => {
  it("says it is reconnecting, keeps what was typed, and carries on when the database is back", async () => {
    model().script([
      { match: lastUser("before the outage"), reply: { text: "answer before" } },
      { match: lastUser("typed during the outage"), reply: { text: "answer after" } },
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"] });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("before the outage");
    await t.keys("Enter");
    await t.waitFor("● answer before");

    await setConnections(false);
    await t.waitFor("database unreachable — reconnecting…");
    await t.type("typed during the outage");
    await t.keys("Enter");
    // The message could not be saved: a one-line notice, and the text is back in the input.
    const failed = await t.waitFor(/⚠ database unreachable \(.*\); try again/);
    expect(failed).toMatch(/\n❯ typed during the outage\s*\n/);
    expect(failed).not.toContain("Failed query");

    await setConnections(true);
    await t.waitForGone("database unreachable — reconnecting…", 30_000);
    await t.keys("Enter");
    const after = await t.waitFor("● answer after", 30_000);
    expect(after).not.toMatch(/\bat .*\.js:\d+/);
    expect(t.stderr()).toBe("");
  });

  it("without LISTEN (WARREN_LISTEN_URL=off) still shows the turn, by polling", async () => {
    model().script({
      match: lastUser("no notifications here"),
      reply: { text: "heard you anyway" },
    });
    const env = warrenEnv({
      databaseUrl: database().url,
      modelUrl: model().baseURL,
      extra: { WARREN_LISTEN_URL: "off" },
    });
    const t = await startTerminal({ env, args: ["--new"] });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("no notifications here");
    await t.keys("Enter");
    const screen = await t.waitFor("● heard you anyway", 15_000);
    expect(screen).toContain("❯ no notifications here");
  });
});
