// The sandbox and the environment allowlist as an agent meets them: `warren -p` with a model that
// runs `env` and tries to write outside its working directory through its real `bash` tool, the
// settings coming from the config file like any user's (runtime/tool-calls.ts wires them).
import { existsSync, rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { after, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

function bashThenDone(command: string): void {
  e2e.fake().script([
    { agent: "root", reply: { toolCalls: [{ name: "bash", arguments: { command } }] } },
    { agent: "root", match: after("bash"), reply: { text: "finished" } },
  ]);
}

function toolResult(): string {
  return (
    e2e
      .fake()
      .requests.at(-1)!
      .messages.find((m) => m.role === "tool")!.content ?? ""
  );
}

describe("an agent's bash in a running warren", () => {
  it("sees no secret in its environment and cannot write outside its working directory", async () => {
    const target = `/var/tmp/warren-runtime-escape-${process.pid}`;
    rmSync(target, { force: true });
    bashThenDone(`env; echo ---; touch ${target}; echo "touch-exit=$?"`);
    const run = await e2e.prompt("go", {
      config: { sandbox: "on" },
      env: { PGPASSWORD: "pg-secret-e2e", ANTHROPIC_API_KEY: "sk-e2e" },
    });
    expect(run.code).toBe(0);
    const seen = toolResult();
    expect(seen).toContain("PATH=");
    for (const name of [
      "DATABASE_URL",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "WARREN_",
      "PGPASSWORD",
      "ANTHROPIC_API_KEY",
    ]) {
      expect(seen).not.toContain(name);
    }
    expect(seen).not.toContain("pg-secret-e2e");
    expect(seen).toContain("Read-only file system");
    expect(seen).not.toContain("touch-exit=0");
    expect(existsSync(target)).toBe(false);
  });

  it('"on" without bwrap refuses bash with NOT_ALLOWED and the model reads why', async () => {
    bashThenDone("echo should-not-run");
    const run = await e2e.prompt("go", {
      config: { sandbox: "on" },
      env: { WARREN_BWRAP: "/nonexistent/bwrap" },
    });
    expect(run.code).toBe(0);
    const seen = toolResult();
    expect(seen).toContain("NOT_ALLOWED");
    expect(seen).toContain("sandbox is required");
    expect(seen).not.toContain("should-not-run\\n");
  });

  it("auto without bwrap says so on stderr in one line, and bash runs unconfined", async () => {
    bashThenDone("echo ran-unconfined");
    const run = await e2e.prompt("go", { env: { WARREN_BWRAP: "/nonexistent/bwrap" } });
    expect(run.code).toBe(0);
    const lines = run.stderr.split("\n").filter((l) => l.includes("sandbox"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/bash runs unconfined; install bubblewrap/);
    expect(toolResult()).toContain("ran-unconfined");
  });
});
