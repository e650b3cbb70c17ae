// `/trust` in the TUI applies at once (SPEC §9): the newly trusted folder's settings env, skills,
// command files and .mcp.json servers count from the next turn, without a restart; the allowed
// server (slow to start) is waited for before the next model request, as on a first run. So do
// `warren trust` and `warren trust --revoke` run in another shell while the TUI runs (it watches
// the trust stores, ui/trust-sync.ts). In a real terminal (tmux) with the fake model server and
// @modelcontextprotocol/server-everything.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { after, lastToolResults, lastUserStartsWith, requestsOf } from "../runtime/e2e-support.js";
import { runWarren, warrenEnv } from "../support/warren.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const EVERYTHING = path.join(
  root,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** warren's environment for the test, its config allowing bash and the `ev` server's tools. */
function allowingEnv() {
  const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
  const configDir = path.join(env.XDG_CONFIG_HOME!, "warren");
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    path.join(configDir, "config.json"),
    JSON.stringify({ policy: { bash: "allow", "mcp__ev__*": "allow" } }),
    { mode: 0o600 },
  );
  return env;
}

describe("/trust in the TUI", { retry: 1 }, () => {
  it("applies the folder's env, skills, commands and .mcp.json from the next turn, waiting for the new server", async () => {
    // Outside /tmp: the MCP server runs in the sandbox, whose /tmp is private.
    const repo = mkdtempSync(path.join("/var/tmp", "warren-trust-live-"));
    mkdirSync(path.join(repo, ".git"));
    write(
      path.join(repo, ".claude/settings.json"),
      JSON.stringify({ env: { FROM_SETTINGS: "yes-live" } }),
    );
    write(
      path.join(repo, ".claude/skills/pdf/SKILL.md"),
      "---\nname: pdf\ndescription: Fill in PDF forms\n---\nPDF-BODY\n",
    );
    write(path.join(repo, ".claude/commands/review.md"), "REVIEW-TEXT $ARGUMENTS\n");
    // Slow to start (3 s): without the wait, the next request would go out before its list.
    const slow = 'sleep 3; exec "$0" "$1" stdio';
    write(
      path.join(repo, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          ev: { command: "/bin/sh", args: ["-c", slow, process.execPath, EVERYTHING] },
        },
      }),
    );
    const env = allowingEnv();
    const echo = { name: "bash", arguments: { command: 'echo "env=[$FROM_SETTINGS]"' } };
    model().script([
      { agent: "root", match: lastUserStartsWith("one"), reply: { toolCalls: [echo] } },
      { agent: "root", match: after("bash"), reply: { text: "first-done" } },
      { agent: "root", match: lastUserStartsWith("REVIEW-TEXT two"), reply: { toolCalls: [echo] } },
      { agent: "root", match: after("bash"), reply: { text: "second-done" } },
    ]);
    const t = await startTerminal({ env, args: ["--new"], cwd: repo, width: 120, height: 40 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/, 30_000);
    await t.type("one");
    await t.keys("Enter");
    await t.waitFor("first-done", 30_000);

    await t.type("/trust");
    await t.keys("Enter");
    await t.waitFor("they apply from the next tool call", 30_000);
    await t.waitFor("allowed", 30_000);
    // The command file counts at once: /review is a command now.
    await t.type("/review two");
    await t.keys("Enter");
    await t.waitFor("second-done", 60_000);

    const requests = requestsOf(model(), "root");
    const [first, second, third] = requests;
    expect(first!.systemPrompt).not.toContain("- pdf:");
    expect(first!.tools).not.toContain("mcp__ev__get-env");
    expect(JSON.stringify(lastToolResults(second!)[0]!.value)).toContain("env=[]");
    // The next turn: the skill offered, the server's tools waited for, the env in bash.
    expect(third!.systemPrompt).toContain("- pdf: Fill in PDF forms");
    expect(third!.tools).toContain("mcp__ev__get-env");
    const fourth = requests[3]!;
    expect(JSON.stringify(lastToolResults(fourth)[0]!.value)).toContain("env=[yes-live]");
  }, 120_000);

  it("applies `warren trust` and `warren trust --revoke` run in another shell, without a restart", async () => {
    const repo = mkdtempSync(path.join("/var/tmp", "warren-trust-cli-"));
    mkdirSync(path.join(repo, ".git"));
    write(
      path.join(repo, ".claude/settings.json"),
      JSON.stringify({ env: { FROM_SETTINGS: "yes-cli" } }),
    );
    write(
      path.join(repo, ".claude/skills/pdf/SKILL.md"),
      "---\nname: pdf\ndescription: Fill in PDF forms\n---\nPDF-BODY\n",
    );
    write(
      path.join(repo, ".mcp.json"),
      JSON.stringify({
        mcpServers: { ev: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
      }),
    );
    const env = allowingEnv();
    const echo = { name: "bash", arguments: { command: 'echo "env=[$FROM_SETTINGS]"' } };
    model().script([
      { agent: "root", match: lastUserStartsWith("one"), reply: { toolCalls: [echo] } },
      { agent: "root", match: after("bash"), reply: { text: "first-done" } },
      { agent: "root", match: lastUserStartsWith("two"), reply: { toolCalls: [echo] } },
      { agent: "root", match: after("bash"), reply: { text: "second-done" } },
      { agent: "root", match: lastUserStartsWith("three"), reply: { toolCalls: [echo] } },
      { agent: "root", match: after("bash"), reply: { text: "third-done" } },
    ]);
    const t = await startTerminal({ env, args: ["--new"], cwd: repo, width: 160, height: 40 });
    terminals.push(t);
    await t.waitFor(/\[root [0-9a-f]{8}\]/, 30_000);
    await t.type("one");
    await t.keys("Enter");
    await t.waitFor("first-done", 30_000);

    // Another shell trusts the folder: the TUI says so and applies it, no restart, no /trust.
    const trusted = await runWarren(["trust", repo], env, repo);
    expect(trusted.code, trusted.stderr).toBe(0);
    // The line is long (two paths): it may wrap.
    await t.waitFor(/they apply from the next\s+tool\s+call/, 10_000);
    await t.waitFor("its servers may start", 10_000);
    await t.type("two");
    await t.keys("Enter");
    await t.waitFor("second-done", 60_000);

    // And forgets it: the skill, the server and the settings' env are no longer used.
    const revoked = await runWarren(["trust", "--revoke", repo], env, repo);
    expect(revoked.code, revoked.stderr).toBe(0);
    await t.waitFor("no longer trusted", 10_000);
    await t.type("three");
    await t.keys("Enter");
    await t.waitFor("third-done", 60_000);

    const [first, second, third, fourth, fifth, sixth] = requestsOf(model(), "root");
    expect(first!.systemPrompt).not.toContain("- pdf:");
    expect(first!.tools).not.toContain("mcp__ev__get-env");
    expect(JSON.stringify(lastToolResults(second!)[0]!.value)).toContain("env=[]");
    expect(third!.systemPrompt).toContain("- pdf: Fill in PDF forms");
    expect(third!.tools).toContain("mcp__ev__get-env");
    expect(JSON.stringify(lastToolResults(fourth!)[0]!.value)).toContain("env=[yes-cli]");
    expect(fifth!.systemPrompt).not.toContain("- pdf:");
    expect(fifth!.tools).not.toContain("mcp__ev__get-env");
    expect(JSON.stringify(lastToolResults(sixth!)[0]!.value)).toContain("env=[]");
  }, 150_000);
});
