// WARREN_POOLER: "transaction" when DATABASE_URL is a pooler in transaction mode; LISTEN is then
// off unless WARREN_LISTEN_URL names a direct connection.
import { describe, expect, it } from "vitest";
import { ConfigError, listenUrlFor, loadConfig } from "../../src/config/config.js";

const db = "postgres://warren@pgbouncer.example:6432/warren";
const configOf = (env: Record<string, string>) =>
  loadConfig({ XDG_CONFIG_HOME: "/nonexistent", ...env });

describe("WARREN_POOLER", () => {
  it("is off by default and by 'off'", () => {
    expect(configOf({}).pooler).toBeUndefined();
    expect(configOf({ WARREN_POOLER: "off" }).pooler).toBeUndefined();
    expect(listenUrlFor(configOf({ WARREN_POOLER: "off" }), db)).toBe(db);
  });

  it("transaction: LISTEN is off unless WARREN_LISTEN_URL names a direct connection", () => {
    expect(configOf({ WARREN_POOLER: "transaction" }).pooler).toBe("transaction");
    expect(listenUrlFor(configOf({ WARREN_POOLER: "Transaction" }), db)).toBeNull();
    const direct = "postgres://warren@primary.example:5432/warren";
    expect(
      listenUrlFor(configOf({ WARREN_POOLER: "transaction", WARREN_LISTEN_URL: direct }), db),
    ).toBe(direct);
  });

  it("refuses anything else with one line", () => {
    expect(() => configOf({ WARREN_POOLER: "session" })).toThrow(ConfigError);
    expect(() => configOf({ WARREN_POOLER: "session" })).toThrow(/^WARREN_POOLER must be/);
  });
});
