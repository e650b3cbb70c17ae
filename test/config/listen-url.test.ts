// WARREN_LISTEN_URL: which connection LISTENs (default the database's; `off`: none at all).
import { describe, expect, it } from "vitest";
import { ConfigError, listenUrlFor, loadConfig } from "../../src/config/config.js";

const db = "postgres://warren@db.example:5432/warren";
const configOf = (value?: string) =>
  loadConfig({ XDG_CONFIG_HOME: "/nonexistent", WARREN_LISTEN_URL: value });

describe("WARREN_LISTEN_URL", () => {
  it("defaults to the database URL", () => {
    expect(listenUrlFor(configOf(), db)).toBe(db);
    expect(listenUrlFor(configOf(""), db)).toBe(db);
  });

  it("names another server, or turns LISTEN off", () => {
    const direct = "postgresql://warren@primary.example:5432/warren";
    expect(listenUrlFor(configOf(direct), db)).toBe(direct);
    expect(listenUrlFor(configOf("off"), db)).toBeNull();
    expect(listenUrlFor(configOf("OFF"), db)).toBeNull();
  });

  it("refuses anything else with one line", () => {
    expect(() => configOf("primary.example:5432")).toThrow(ConfigError);
    expect(() => configOf("primary.example:5432")).toThrow(/WARREN_LISTEN_URL/);
  });
});
