// `warren doctor`: one line each for the database, the sandbox and the model server, against the
// real binary, a real database and the fake model server; exit 1 when something needed is down.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startWarren, warrenEnv } from "../support/warren.js";
import { useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

async function doctor(extra: Record<string, string> = {}, args: string[] = [], cwd?: string) {
  const env = warrenEnv({
    databaseUrl: e2e.db().$client.options.connectionString!,
    modelUrl: e2e.fake().baseURL,
    extra,
  });
  return startWarren(["doctor", ...args], env, cwd).done;
}

describe("warren doctor", () => {
  it("prints database, sandbox and model server, one line each, and exits 0 when all answer", async () => {
    const run = await doctor();
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^ok\s+database\s+postgres:\/\/.*\(DATABASE_URL\), reachable$/);
    expect(lines[1]).toMatch(
      /^ok\s+sandbox\s+bubblewrap \(read-only but the working directory, network on\)$/,
    );
    expect(lines[2]).toMatch(
      /^ok\s+model server\s+http:\/\/127\.0\.0\.1:\d+.* reachable \(HTTP \d+\)$/,
    );
    expect(run.stdout).not.toMatch(/:[^@/]+@/); // no password shown
  });

  it("names the instruction files an agent started here reads, root to leaf", async () => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "warren-doctor-")));
    execFileSync("git", ["init", "-q"], { cwd: repo });
    fs.mkdirSync(path.join(repo, "pkg"));
    fs.writeFileSync(path.join(repo, "AGENTS.md"), "build with make\n");
    fs.writeFileSync(path.join(repo, "pkg", "CLAUDE.md"), "this package is special\n");
    const run = await doctor({}, [], path.join(repo, "pkg"));
    expect(run.stdout.trim().split("\n").at(-1)).toBe(
      `ok  instructions  ${path.join(repo, "AGENTS.md")}, ${path.join(repo, "pkg", "CLAUDE.md")}`,
    );
  });

  it("says why the sandbox is unavailable and how to install it; exit 1 only when it is required", async () => {
    const auto = await doctor({ WARREN_BWRAP: "/nonexistent/bwrap" }, ["--json"]);
    expect(auto.code).toBe(0);
    const report = JSON.parse(auto.stdout) as Record<string, { ok: boolean; text: string }>;
    expect(report.sandbox).toMatchObject({ ok: false });
    expect(report.sandbox!.text).toMatch(
      /not found.*bash runs unconfined.*apt-get install bubblewrap/,
    );
    const on = await doctor({ WARREN_BWRAP: "/nonexistent/bwrap", WARREN_SANDBOX: "on" });
    expect(on.code).toBe(1);
    expect(on.stdout).toMatch(/sandbox\s+unavailable .*refuses to run/);
    const off = await doctor({ WARREN_SANDBOX: "off" });
    expect(off.stdout).toMatch(/sandbox\s+off/);
  });

  it("reports a model server and a database that do not answer, and exits 1", async () => {
    // A port nothing listens on: taken, then given back.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const run = await doctor({
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      DATABASE_URL: "postgres://nobody:pw@127.0.0.1:9/none",
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/database\s+unreachable: cannot reach the database/);
    expect(run.stdout).toMatch(
      new RegExp(
        `model server\\s+http://127\\.0\\.0\\.1:${port}/v1 unreachable \\(ECONNREFUSED\\)`,
      ),
    );
    expect(run.stdout).not.toContain("pw@");
  });

  it("has --help and rejects stray arguments", async () => {
    const help = await doctor({}, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: warren doctor [--json]");
    const bad = await doctor({}, ["extra"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unexpected argument "extra"');
  });
});
