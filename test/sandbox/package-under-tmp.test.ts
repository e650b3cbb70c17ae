// warren's own package is seen inside the sandbox wherever it lies: under /tmp (a checkout there)
// the sandbox's private /tmp would hide it, so it is bound read-only (sandbox/launch.ts). The
// secrets test runs `bin/warren` inside the sandbox, from a checkout under /tmp too.
import { describe, expect, it } from "vitest";
import { packageUnderTmp } from "../../src/sandbox/launch.js";

describe("warren's package inside the sandbox", () => {
  it("under /tmp: bound read-only at the same path", () => {
    expect(packageUnderTmp("/tmp/wl")).toEqual(["--ro-bind", "/tmp/wl", "/tmp/wl"]);
  });

  it("elsewhere: nothing added (the read-only root shows it already)", () => {
    expect(packageUnderTmp("/home/person/warren")).toEqual([]);
    expect(packageUnderTmp("/tmpx/warren")).toEqual([]);
    expect(packageUnderTmp("/tmp")).toEqual([]);
  });
});
