// Warnings as data: each kind worded by one function, the status bar's form for an outage.
import { describe, expect, it } from "vitest";
import { describeOutage, notice, outage, wordWarning } from "../../src/db/warning.js";

describe("wordWarning", () => {
  it("words each kind as today's lines say it", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(outage(refused)).toEqual({ kind: "outage", cause: "connection refused" });
    expect(wordWarning(outage(refused))).toBe(
      "database unreachable (connection refused); retrying",
    );
    expect(wordWarning(outage(refused), "status")).toBe("database unreachable — reconnecting…");
    expect(describeOutage("connection reset")).toBe("database unreachable (connection reset)");
    expect(
      wordWarning({ kind: "notifications-off", cause: "LISTEN is off", poll: "polling every 1 s" }),
    ).toBe("notifications unavailable (LISTEN is off); polling every 1 s");
    expect(wordWarning(notice("a notification subscriber failed: x"))).toBe(
      "a notification subscriber failed: x",
    );
  });
});
