// The network gate's rules as a table (src/sandbox/network/rules.ts), and the proxy's decisions
// on names a resolver maps to private addresses (proxy.ts with its own resolver: no real DNS).
import net from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  decideAddress,
  decideHost,
  isNonPublic,
  narrowNetwork,
  normalizeHost,
  parseNetworkSetting,
  type NetworkRules,
} from "../../src/sandbox/network/rules.js";
import { startNetworkProxy } from "../../src/sandbox/network/proxy.js";

describe("parseNetworkSetting", () => {
  it("takes true, false and {allow, deny}", () => {
    expect(parseNetworkSetting(true)).toBe(true);
    expect(parseNetworkSetting(false)).toBe(false);
    expect(parseNetworkSetting({ allow: ["registry.npmjs.org", "*.github.com"] })).toEqual({
      allow: ["registry.npmjs.org", "*.github.com"],
      deny: [],
    });
    expect(
      parseNetworkSetting({
        allow: ["localhost:8080", "[::1]:80", "10.0.0.5", "*"],
        deny: ["x.io"],
      }),
    ).toEqual({ allow: ["localhost:8080", "[::1]:80", "10.0.0.5", "*"], deny: ["x.io"] });
  });

  const bad: [unknown, RegExp][] = [
    ["yes", /sandbox_network must be true, false or \{"allow"/],
    [["a.com"], /sandbox_network must be true, false or/],
    [{ allow: "a.com" }, /sandbox_network.allow must be a list of hosts/],
    [{ allow: [1] }, /must be a list of hosts, got 1/],
    [{ allow: ["https://a.com"] }, /"https:\/\/a.com" is not a host: write the host alone/],
    [{ allow: ["a.com:0"] }, /"a.com:0" has an invalid port/],
    [{ allow: ["a.com:http"] }, /invalid port/],
    [{ allow: ["a*.com"] }, /may use "\*" only as a whole first label/],
    [{ allow: ["*.*.com"] }, /may use "\*" only/],
    [{ allow: ["a b.com"] }, /is not a host name or IP address/],
    [{ allow: [], hosts: [] }, /unknown field "hosts"/],
  ];
  it.each(bad)("refuses %j with one line", (value, message) => {
    expect(() => parseNetworkSetting(value)).toThrow(message);
    try {
      parseNetworkSetting(value);
    } catch (err) {
      expect((err as Error).message).not.toContain("\n");
    }
  });

  it("an empty allow list is a gate with nothing listed: every host is a question", () => {
    const nothing = parseNetworkSetting({ allow: [] });
    expect(nothing).toEqual({ allow: [], deny: [] });
    const verdict = decideHost([nothing as NetworkRules], "registry.npmjs.org", 443);
    expect(verdict).toEqual({
      ok: false,
      reason: "registry.npmjs.org:443 is not in the allow list",
      askable: true,
    });
    // A denied host is never a question.
    expect(decideHost([{ allow: ["*"], deny: ["x.io"] }], "x.io", 443)).not.toHaveProperty(
      "askable",
    );
  });

  it("names where it was found", () => {
    expect(() => parseNetworkSetting("no", "profiles.x.sandbox_network")).toThrow(
      /^profiles\.x\.sandbox_network must be/,
    );
  });
});

describe("narrowNetwork: a profile only narrows", () => {
  const a: NetworkRules = { allow: ["a.com"], deny: [] };
  const b: NetworkRules = { allow: ["b.com"], deny: [] };
  const cases: [
    string,
    Parameters<typeof narrowNetwork>[0],
    Parameters<typeof narrowNetwork>[1],
    unknown,
  ][] = [
    ["true, nothing asked", true, undefined, true],
    ["true, a gate asked", true, a, [a]],
    ["true, false asked", true, false, false],
    ["a gate, true asked", [a], true, [a]],
    ["a gate, another gate asked: both apply", [a], b, [a, b]],
    ["a gate, false asked", [a], false, false],
    ["false, true asked", false, true, false],
    ["false, a gate asked", false, a, false],
  ];
  it.each(cases)("%s", (_label, from, asked, expected) => {
    expect(narrowNetwork(from, asked)).toEqual(expected);
  });

  it("two gates: a host must be in both", () => {
    const both = narrowNetwork([{ allow: ["*.com"], deny: [] }], { allow: ["a.com"], deny: [] });
    expect(Array.isArray(both) && decideHost(both, "a.com", 443).ok).toBe(true);
    expect(Array.isArray(both) && decideHost(both, "b.com", 443).ok).toBe(false);
  });
});

describe("decideHost", () => {
  const gate: NetworkRules[] = [
    {
      allow: ["registry.npmjs.org", "*.github.com", "localhost:8080", "*:8443", "[::1]:9000"],
      deny: ["evil.github.com", "*.bad.github.com"],
    },
  ];
  const cases: [string, number, boolean][] = [
    ["registry.npmjs.org", 443, true],
    ["registry.npmjs.org", 80, true],
    ["npmjs.org", 443, false],
    ["api.github.com", 443, true],
    ["a.b.github.com", 443, true],
    ["github.com", 443, false], // "*." is the subdomains only
    ["evil.github.com", 443, false], // deny wins
    ["x.bad.github.com", 443, false],
    ["localhost", 8080, true],
    ["localhost", 8081, false],
    ["anything.example", 8443, true],
    ["::1", 9000, true],
    ["notgithub.com", 443, false],
  ];
  it.each(cases)("%s:%d → %s", (host, port, ok) => {
    expect(decideHost(gate, normalizeHost(host)!, port).ok).toBe(ok);
  });
});

describe("decideAddress: loopback and private only when listed explicitly", () => {
  const gate: NetworkRules[] = [
    { allow: ["*", "localhost:8080", "10.1.2.3:5000", "db.internal"], deny: ["203.0.113.9"] },
  ];
  const cases: [string, number, string, boolean][] = [
    ["example.com", 443, "93.184.216.34", true],
    ["example.com", 443, "127.0.0.1", false], // resolves to loopback, matched only by "*"
    ["example.com", 443, "10.0.0.1", false],
    ["example.com", 443, "192.168.1.1", false],
    ["example.com", 443, "169.254.169.254", false], // cloud metadata
    ["example.com", 443, "100.64.0.1", false],
    ["example.com", 443, "::1", false],
    ["example.com", 443, "::ffff:127.0.0.1", false],
    ["example.com", 443, "fd00::1", false],
    ["example.com", 443, "fe80::1", false],
    ["example.com", 443, "64:ff9b::a00:1", false], // NAT64 of 10.0.0.1
    ["example.com", 443, "2002:7f00:1::", false], // 6to4 of 127.0.0.1
    ["example.com", 443, "0.0.0.0", false],
    ["example.com", 443, "2606:4700::1111", true],
    ["localhost", 8080, "127.0.0.1", true], // listed by name and port
    ["localhost", 8081, "127.0.0.1", false],
    ["other.example", 5000, "10.1.2.3", true], // the address is listed
    ["db.internal", 5432, "10.9.9.9", true], // the name is listed
    ["example.com", 443, "203.0.113.9", false], // a denied address
  ];
  it.each(cases)("%s:%d at %s → %s", (host, port, address, ok) => {
    expect(decideAddress(gate, host, port, address).ok).toBe(ok);
  });
});

describe("normalizeHost", () => {
  it.each([
    ["Example.COM.", "example.com"],
    ["0x7f.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["[::FFFF:127.0.0.1]", "127.0.0.1"],
    ["[0:0:0:0:0:0:0:1]", "::1"],
    ["bücher.de", "xn--bcher-kva.de"],
  ])("%s → %s", (raw, expected) => {
    expect(normalizeHost(raw)).toBe(expected);
  });
  it("is undefined for what is not a host", () => {
    expect(normalizeHost("")).toBeUndefined();
    expect(normalizeHost("a b")).toBeUndefined();
  });
  it("isNonPublic agrees with net for plain public addresses", () => {
    expect(isNonPublic("8.8.8.8")).toBe(false);
    expect(net.isIP("8.8.8.8")).toBe(4);
  });
});

describe("the proxy pins what it checked (no real DNS: a resolver of its own)", () => {
  const runDir = mkdtempSync(path.join(os.tmpdir(), "warren-proxy-run-"));
  afterAll(() => rmSync(runDir, { recursive: true, force: true }));

  /** One request through the proxy's socket, as the bridge would carry it. */
  function ask(socket: string, line: string): Promise<string> {
    return new Promise((resolve) => {
      const s = net.connect(socket);
      let text = "";
      s.on("data", (d: Buffer) => (text += d.toString()));
      s.on("close", () => resolve(text));
      s.on("error", () => resolve(text));
      s.write(`${line}\r\nHost: proxy\r\nConnection: close\r\n\r\n`);
    });
  }

  it("a wildcard-matched name resolving to a private address is refused", async () => {
    const resolved: string[] = [];
    const proxy = await startNetworkProxy([{ allow: ["*.example.com"], deny: [] }], {
      runDir,
      resolve: async (host) => {
        resolved.push(host);
        return host === "rebind.example.com"
          ? [
              { address: "93.184.216.34", family: 4 },
              { address: "10.0.0.7", family: 4 },
            ]
          : [{ address: "10.0.0.7", family: 4 }];
      },
    });
    try {
      const inner = await ask(proxy.socketPath, "CONNECT inner.example.com:443 HTTP/1.1");
      expect(inner).toMatch(/^HTTP\/1\.1 403/);
      expect(inner).toContain("inner.example.com:443 resolves to 10.0.0.7, a loopback or private");
      // One private address among public ones is enough to refuse.
      const rebind = await ask(proxy.socketPath, "GET http://rebind.example.com/ HTTP/1.1");
      expect(rebind).toMatch(/^HTTP\/1\.1 403/);
      // Refused by name before any lookup.
      const other = await ask(proxy.socketPath, "CONNECT other.org:443 HTTP/1.1");
      expect(other).toContain("other.org:443 is not in the allow list");
      expect(resolved).toEqual(["inner.example.com", "rebind.example.com"]);
    } finally {
      await proxy.close();
    }
  });
});
