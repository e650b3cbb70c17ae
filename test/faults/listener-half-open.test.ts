// The listener's connection goes half-open (SPEC §5): a TCP proxy in front of Postgres stops
// forwarding without closing anything, and swallows new connections too for a while. The bus
// notices through its check query's timeout, stops listening (and says so), reconnects once the
// path is open again, tells its subscribers RECONNECTED, and a NOTIFY sent afterwards arrives.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { createBus, RECONNECTED, type Bus } from "../../src/bus/bus.js";
import type { Warning } from "../../src/db/warning.js";
import { sleep } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";

const database = useTestDatabase();
let proxy: TcpProxy | undefined;
let bus: Bus | undefined;

afterEach(async () => {
  await bus?.close();
  await proxy?.close();
  bus = proxy = undefined;
});

async function until(check: () => boolean, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

describe("a half-open listener connection", () => {
  it("is noticed by the check query, replaced once the path is open, and heard again", async () => {
    const { url, db } = database();
    const target = new URL(url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const warnings: Warning[] = [];
    bus = await createBus(proxy.urlFor(url), { onWarning: (m) => warnings.push(m) });
    const channel = "warren_fault_half_open";
    const payloads: string[] = [];
    await bus.subscribe(channel, (payload) => payloads.push(payload));
    // Sent on the test's own connection, not through the proxy.
    const notify = (payload: string) => db.execute(sql`select pg_notify(${channel}, ${payload})`);
    await notify("before");
    await until(() => payloads.includes("before"), "a NOTIFY through the proxy", 5_000);
    expect(bus.listening()).toBe(true);

    // Silence: open connections and new ones are swallowed both ways; nothing is ever closed.
    proxy.setNewConnections("silent");
    proxy.halfOpenAll();
    const silencedAt = Date.now();
    const acceptedBefore = proxy.accepted();
    await notify("lost");
    // The check query (every 10 s) times out (5 s): the bus stops listening and says so.
    await until(() => !bus!.listening(), "the bus to notice the silence", 25_000);
    const noticedMs = Date.now() - silencedAt;
    // The listener's reconnecting is part of an outage (one "database unreachable" line).
    expect(warnings).toContainEqual({ kind: "outage", cause: "connection lost" });
    // Its first reconnect runs into the silence as well (and must time out, not hang).
    await until(() => proxy!.accepted() > acceptedBefore, "a reconnect into the silence", 5_000);

    proxy.setNewConnections("forward");
    const openedAt = Date.now();
    await until(() => payloads.includes(RECONNECTED), "RECONNECTED", 30_000);
    expect(bus.listening()).toBe(true);
    await notify("after");
    await until(() => payloads.includes("after"), "a NOTIFY after the reconnect", 5_000);
    const heardMs = Date.now() - openedAt;
    process.stderr.write(
      `half-open listener: silence noticed after ${(noticedMs / 1000).toFixed(1)} s, ` +
        `heard again ${(heardMs / 1000).toFixed(1)} s after the path reopened\n`,
    );
    expect(heardMs).toBeLessThan(30_000);
    // What was sent into the silence is gone; the RECONNECTED told the subscriber to look again.
    expect(payloads).toEqual(["before", RECONNECTED, "after"]);
  });
});
