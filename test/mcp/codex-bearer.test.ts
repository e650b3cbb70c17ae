// Codex's `bearer_token_env_var` in `[mcp_servers.NAME]` of ~/.codex/config.toml (SPEC §9): an
// HTTP server gets `Authorization: Bearer <the variable's value>`; a variable that is not set is
// one warning naming it. End to end through `bin/warren -p` (needs `npm run build`) against a real
// streamable HTTP MCP server (the SDK's) that refuses a request without the right header.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPersonMcp } from "../../src/mcp/person.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();
const TOKEN = "tok-5c1e7";

/** A stateless MCP server whose one tool, `whoami`, answers "authorized"; 401 without the token. */
let server: http.Server;
let url = "";
const seen: (string | undefined)[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { "content-type": "text/plain" }).end("missing or wrong bearer token");
      return;
    }
    const mcp = new Server({ name: "auth", version: "1" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: "whoami", description: "Says who you are.", inputSchema: { type: "object" } },
      ],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, () => ({
      content: [{ type: "text", text: "authorized" }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function codexHome(): string {
  const home = mkdtempSync(path.join("/var/tmp", "warren-codex-bearer-"));
  mkdirSync(path.join(home, ".codex"));
  writeFileSync(
    path.join(home, ".codex", "config.toml"),
    ["[mcp_servers.auth]", `url = "${url}"`, 'bearer_token_env_var = "AUTH_TOKEN_X"'].join("\n"),
  );
  return home;
}

describe("Codex's bearer_token_env_var", () => {
  it("an HTTP server gets Authorization: Bearer <value>; its tool is offered and answers", async () => {
    const home = codexHome();
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "mcp__auth__whoami", arguments: {} }] },
      },
      { agent: "root", match: after("mcp__auth__whoami"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      env: { HOME: home, AUTH_TOKEN_X: TOKEN },
      cwd: home,
      config: { policy: { "mcp__auth__*": "allow" } },
      timeout: 90,
    });
    expect(run.json?.text, run.stderr).toBe("done");
    const [first, second] = requestsOf(e2e.fake(), "root");
    expect(first!.tools).toContain("mcp__auth__whoami");
    expect(JSON.stringify(lastToolResults(second!)[0]!.value)).toContain("authorized");
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((h) => h === `Bearer ${TOKEN}`)).toBe(true);
  }, 120_000);

  it("a variable that is not set: one warning naming it, and that server is not used", () => {
    const home = codexHome();
    const person = loadPersonMcp(home, { HOME: home });
    expect(person.servers).toEqual({});
    expect(person.warnings).toEqual([
      `${path.join(home, ".codex", "config.toml")}: mcp_servers.auth: bearer_token_env_var names AUTH_TOKEN_X, which is not set in warren's environment (that server is not used)`,
    ]);
    const set = loadPersonMcp(home, { HOME: home, AUTH_TOKEN_X: TOKEN });
    expect(set.warnings).toEqual([]);
    expect(set.servers.auth).toMatchObject({ url, headers: { Authorization: `Bearer ${TOKEN}` } });
  });
});
