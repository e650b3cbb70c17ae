// The trust stores watched (config/trust.ts watchTrust, trust-store.ts watchStores): how a running
// TUI hears of a `warren trust` in another shell. A store replaced by a rename is seen within a
// second, a burst of writes is one call, other files in warren's home are not, a home that does
// not exist yet is polled (once a second) until it does, and a failing listener stops nothing.
import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { watchTrust } from "../../src/config/trust.js";
import { rememberAllow, type StoreWatch } from "../../src/trust-store.js";

const watches: StoreWatch[] = [];
afterEach(() => {
  for (const w of watches.splice(0)) w.close();
});

function home() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-trust-watch-"));
  return { dir, env: { WARREN_HOME: path.join(dir, "home") } };
}

function counter() {
  const calls: number[] = [];
  return { calls, onChange: () => void calls.push(Date.now()) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok() && Date.now() < deadline) await sleep(20);
}

/** A store written as rememberAllow does: whole, then renamed over the old one. */
function replace(store: string, text: string) {
  writeFileSync(`${store}.tmp`, text);
  renameSync(`${store}.tmp`, store);
}

describe("watchTrust", () => {
  it("sees a store replaced by a rename within a second; a burst of writes is one call", async () => {
    const { env } = home();
    mkdirSync(env.WARREN_HOME);
    const seen = counter();
    watches.push(watchTrust(env, seen.onChange));
    const started = Date.now();
    const store = path.join(env.WARREN_HOME, "trusted-files.json");
    replace(store, '{"allowed":{}}\n');
    replace(store, '{"allowed":{"a":{"key":"k","at":"now"}}}\n');
    replace(path.join(env.WARREN_HOME, "mcp-allowed.json"), '{"allowed":{}}\n');
    await until(() => seen.calls.length > 0, 2_000);
    expect(seen.calls).toHaveLength(1);
    expect(seen.calls[0]! - started).toBeLessThan(1_000);
    await sleep(400);
    expect(seen.calls).toHaveLength(1);

    // rememberAllow itself (the code `warren trust` runs) is seen too.
    rememberAllow({ file: "/x/.mcp.json", key: "k2", store });
    await until(() => seen.calls.length > 1, 2_000);
    expect(seen.calls).toHaveLength(2);
  });

  it("leaves other files of warren's home alone", async () => {
    const { env } = home();
    mkdirSync(env.WARREN_HOME);
    const seen = counter();
    watches.push(watchTrust(env, seen.onChange));
    writeFileSync(path.join(env.WARREN_HOME, "pg-password"), "x");
    replace(path.join(env.WARREN_HOME, "other.json"), "{}");
    await sleep(600);
    expect(seen.calls).toHaveLength(0);
  });

  it("polls a home that does not exist yet, once a second, until a store appears", async () => {
    const { env } = home();
    const seen = counter();
    watches.push(watchTrust(env, seen.onChange));
    await sleep(200);
    rememberAllow({
      file: "/x/settings.json",
      key: "k",
      store: path.join(env.WARREN_HOME, "trusted-files.json"),
    });
    await until(() => seen.calls.length > 0, 3_000);
    expect(seen.calls).toHaveLength(1);
  });

  it("goes on after a listener that throws; nothing after close", async () => {
    const { env } = home();
    mkdirSync(env.WARREN_HOME);
    let calls = 0;
    const watch = watchTrust(env, () => {
      calls++;
      throw new Error("listener failed");
    });
    watches.push(watch);
    const store = path.join(env.WARREN_HOME, "trusted-files.json");
    replace(store, "{}");
    await until(() => calls > 0, 2_000);
    replace(store, '{"allowed":{}}');
    await until(() => calls > 1, 2_000);
    expect(calls).toBe(2);
    watch.close();
    replace(store, '{"allowed":{"b":{"key":"k","at":"now"}}}');
    await sleep(500);
    expect(calls).toBe(2);
  });
});
