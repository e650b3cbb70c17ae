// The TUI's side of MCP: `/mcp` parses, and the first screen counts the configured servers.
import { describe, expect, it } from "vitest";
import { parseCommand } from "../../src/ui/commands.js";
import { renderWelcome } from "../../src/ui/views/welcome.js";
import { listingLines, listingOf } from "../../src/mcp/listing.js";
import { configHash, parseMcpServers } from "../../src/mcp/config.js";

describe("MCP in the TUI", () => {
  it("parses /mcp", () => {
    expect(parseCommand("/mcp")).toEqual({ ok: true, command: { name: "mcp" } });
    expect(parseCommand("/mcp x")).toMatchObject({ ok: false });
  });

  it("lists servers with their state and tools", () => {
    const servers = parseMcpServers(
      { a: { command: "srv", args: ["--x"] }, b: { url: "http://h/mcp" } },
      {},
      "/",
    );
    const lines = listingLines(
      listingOf(servers, [
        {
          server: "a",
          config_hash: configHash(servers.a!),
          tools: [{ name: "t1", inputSchema: { type: "object" } }],
          error: null,
          fetched_at: "now",
        },
      ]),
    );
    expect(lines).toEqual([
      "a  stdio  srv --x  — 1 tool",
      "  mcp__a__t1",
      "b  http  http://h/mcp  — not fetched yet (offers no tools until it is)",
    ]);
  });

  it("counts the configured servers on the first screen", () => {
    const agent = {
      id: "a".repeat(36),
      name: "root",
      tree_id: "a".repeat(36),
      model: "m",
      cwd: "/",
    };
    const theme = { color: false } as never;
    const text = (n?: number) =>
      renderWelcome(
        {
          agent,
          agents: 1,
          panelKey: "^T",
          ...(n
            ? {
                sources: [
                  { label: "mcp", files: [], note: `${n} servers · /mcp lists them`, warnings: [] },
                ],
              }
            : {}),
        },
        100,
        theme,
      )
        .map((l) => JSON.stringify(l))
        .join("\n");
    expect(text(2)).toContain("2 servers · /mcp lists them");
    expect(text()).not.toContain("servers");
    // A project .mcp.json waiting for the person: one warning saying how to allow it, wrapped at
    // a narrow width rather than cut before "/mcp allow".
    const line =
      "/p/.mcp.json waiting: its 1 MCP server (srv) start only after /mcp allow allows it";
    const waiting = renderWelcome(
      {
        agent,
        agents: 1,
        panelKey: "^T",
        sources: [{ label: "mcp", files: ["/p/.mcp.json"], warnings: [line] }],
      },
      40,
      theme,
    ).map((l) => JSON.stringify(l));
    expect(waiting.join(" ")).toContain("allows it");
  });
});
