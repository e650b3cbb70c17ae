// `mcp_servers` checks, MCP tool names in policies and profiles, and the tool list's merge.
import { describe, expect, it } from "vitest";
import { childCapabilities } from "../../src/agents/capabilities.js";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { decide } from "../../src/policy/policy.js";
import { configHash, parseMcpServers } from "../../src/mcp/config.js";
import { buildTools, type CatalogRow } from "../../src/mcp/catalog.js";
import { serverEnv } from "../../src/mcp/env.js";
import { capText } from "../../src/mcp/result.js";
import { toolsFor } from "../../src/tools/registry.js";
import { loadConfig } from "../../src/config/config.js";

const parse = (value: unknown) => parseMcpServers(value, {}, "/base");

describe("mcp_servers", () => {
  it("takes stdio and HTTP servers with defaults", () => {
    const servers = parse({
      fs: { command: "npx", args: ["-y", "x"], env: { A: "1" }, cwd: "sub" },
      web: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer t" } },
    });
    expect(servers.fs).toEqual({
      command: "npx",
      args: ["-y", "x"],
      env: { A: "1" },
      cwd: "/base/sub",
      startupTimeoutMs: 30_000,
      callTimeoutMs: 120_000,
    });
    expect(servers.web).toMatchObject({ url: "http://127.0.0.1:1/mcp", startupTimeoutMs: 30_000 });
  });

  it.each([
    [{ "bad name": { command: "x" } }, "mcp_servers.bad name: a server's name may only use"],
    [{ a: { command: "x", url: "http://h" } }, "needs exactly one of"],
    [{ a: {} }, "needs exactly one of"],
    [{ a: { command: "" } }, "a.command must be a non-empty string"],
    [{ a: { command: "x", args: "y" } }, "a.args must be a list of strings"],
    [{ a: { command: "x", env: { K: 1 } } }, "a.env must be an object of strings"],
    [{ a: { command: "x", headers: {} } }, 'unknown key "headers"'],
    [{ a: { url: "ftp://h" } }, "a.url must be an http:// or https:// URL"],
    [
      { a: { command: "x", startup_timeout_seconds: 0 } },
      "startup_timeout_seconds must be a positive",
    ],
    [[], "mcp_servers must be an object"],
  ])("refuses %j with one line", (value, message) => {
    let error: Error | undefined;
    try {
      parse(value);
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).toContain(message);
    expect(error?.message).not.toContain("\n");
  });

  it("hashes what makes a server, not its timeouts", () => {
    const [a, b, c] = [
      parse({ s: { command: "x", call_timeout_seconds: 5 } }).s!,
      parse({ s: { command: "x" } }).s!,
      parse({ s: { command: "x", env: { K: "v" } } }).s!,
    ];
    expect(configHash(a)).toBe(configHash(b));
    expect(configHash(a)).not.toBe(configHash(c));
  });

  it("passes a server only the allowlisted environment and its own", () => {
    const env = serverEnv(
      { MINE: "1" },
      {
        PATH: "/bin",
        HOME: "/h",
        DATABASE_URL: "postgres://x",
        OPENAI_API_KEY: "k",
        WARREN_X: "y",
      },
    );
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", MINE: "1" });
  });

  it("caps text like bash output", () => {
    const capped = capText(`${"a".repeat(20_000)}${"b".repeat(20_000)}`);
    expect(capped.truncated).toBe(true);
    expect(capped.text.length).toBeLessThanOrEqual(30_000);
    expect(capped.text.startsWith("a")).toBe(true);
    expect(capped.text.endsWith("b")).toBe(true);
  });
});

describe("MCP tools in the policy and in profiles", () => {
  it("asks for MCP tools by default, and a * pattern names a server's tools", () => {
    expect(decide(undefined, [], "mcp__gh__create_issue", {}).verdict).toBe("ask");
    const base = { "mcp__gh__*": "allow" as const, read_file: "allow" as const };
    expect(decide(base, [], "mcp__gh__create_issue", {}).verdict).toBe("allow");
    expect(decide(base, [], "mcp__other__x", {}).verdict).toBe("ask");
    // The most specific pattern wins; a narrowing policy still narrows.
    const specific = { "mcp__*": "allow" as const, "mcp__gh__delete*": "deny" as const };
    expect(decide(specific, [], "mcp__gh__delete_repo", {}).verdict).toBe("deny");
    expect(decide(specific, [{ "mcp__gh__*": "ask" }], "mcp__gh__list", {}).verdict).toBe("ask");
  });

  const config = loadConfig({ HOME: "/nonexistent" });
  const parent = (tools: string[] | null) =>
    ({
      id: "p",
      profile: null,
      caps: tools ? { tools, file_access: "cwd", sandbox: "auto" } : null,
      policy: [],
      budget: {},
      turns: 0,
      tool_calls: 0,
      input_tokens: "0",
      output_tokens: "0",
      created_at: new Date().toISOString(),
    }) as unknown as AgentRow;

  it("narrows a child's tools with patterns on either side, never widening", () => {
    const child = (from: string[] | null, asked: string[]) =>
      childCapabilities(config, parent(from), { profile: { tools: asked } }).caps.tools;
    expect(child(null, ["mcp__gh__*"])).toEqual(["mcp__gh__*", "send", "wait"]);
    expect(child(["mcp__gh__*"], ["mcp__gh__list", "mcp__db__query"])).toEqual([
      "mcp__gh__list",
      "send",
      "wait",
    ]);
    expect(child(["mcp__gh__list"], ["mcp__*"])).toEqual(["mcp__gh__list", "send", "wait"]);
    expect(child(["mcp__gh__*"], ["mcp__*"])).toEqual(["mcp__gh__*", "send", "wait"]);
    expect(child(["mcp__a*"], ["mcp__*b"])).toEqual(["send", "wait"]);
  });

  it("merges MCP tools into the one alphabetised list and matches patterns", () => {
    const servers = parse({ gh: { command: "x" } });
    const row: CatalogRow = {
      server: "gh",
      config_hash: configHash(servers.gh!),
      tools: [
        { name: "list", inputSchema: { type: "object" } },
        { name: "create", description: "Creates.", inputSchema: { type: "object" } },
      ],
      error: null,
      fetched_at: "t",
    };
    const mcp = buildTools([row], servers);
    const all = toolsFor(null, mcp).map((t) => t.name);
    expect(all).toEqual([...all].sort((a, b) => a.localeCompare(b)));
    expect(all).toContain("mcp__gh__create");
    expect(toolsFor(["mcp__gh__c*", "send"], mcp).map((t) => t.name)).toEqual([
      "mcp__gh__create",
      "send",
    ]);
    // The same array for the same set: the model adapter keeps what it derives from it.
    expect(toolsFor(null, mcp)).toBe(toolsFor(null, mcp));
  });
});
