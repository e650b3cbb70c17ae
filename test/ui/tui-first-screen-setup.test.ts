// The first screen names what of the person's setup was read and what was not (SPEC §9), in a
// real terminal (tmux, 100x30): its lines wrap instead of being cut, and a failing MCP server's
// warning arrives below it, never replacing it; the server's error keeps its start ("Cannot find
// module").
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

describe("the first screen lists the setup read", { retry: 1 }, () => {
  it("keeps the reads line and the warnings when a failing MCP server's warning arrives", async () => {
    // Outside /tmp: the MCP server runs in the sandbox, whose /tmp is private.
    const repo = mkdtempSync(path.join("/var/tmp", "warren-first-setup-"));
    mkdirSync(path.join(repo, ".git"));
    writeFileSync(path.join(repo, "AGENTS.md"), "Rules.\n");
    writeFileSync(path.join(repo, "CLAUDE.md"), "@AGENTS.md\n@docs/missing-notes.md\n");
    const missing = path.join(mkdtempSync(path.join("/var/tmp", "warren-gone-")), "server.js");
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const configDir = path.join(env.XDG_CONFIG_HOME!, "warren");
    mkdirSync(configDir, { recursive: true });
    writeFileSync(
      path.join(configDir, "config.json"),
      JSON.stringify({ mcp_servers: { broken: { command: process.execPath, args: [missing] } } }),
      { mode: 0o600 },
    );
    const t = await startTerminal({ env, args: ["--new"], cwd: repo, width: 100, height: 30 });
    terminals.push(t);
    const screen = await t.waitFor("Cannot find module", 30_000);
    expect(screen).toContain(`directory  ${repo}`);
    // Wrapped under its label, not cut at the edge.
    expect(screen).toContain(`reads      ${repo}/AGENTS.md,\n             ${repo}/CLAUDE.md`);
    expect(screen).toContain("mcp        ");
    expect(screen).toMatch(/imports\s+\S*missing-notes\.md, which is not there/);
    expect(screen).toContain("/capture then /fork");
    // The server's failure, its start kept.
    expect(screen).toMatch(/MCP server "broken"/);
    // Nothing cut at the right edge: every row fits, and the long ones went on to the next row.
    for (const row of screen.split("\n")) expect(row.length).toBeLessThanOrEqual(100);
  });
});
