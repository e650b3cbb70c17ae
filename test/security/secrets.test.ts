// Secrets out of reach (SPEC section 3): a hostile model with `bash` tries to read warren's own
// secrets — from its environment, another process's environment, warren's home, the config file,
// libpq's password file, `warren db url` and `psql "$DATABASE_URL"` — and gets nothing it could
// connect with. Each case goes through the real bash tool with the settings loadConfig gives.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { buildToolEnv } from "../../src/sandbox/env.js";
import { probeBwrap } from "../../src/sandbox/launch.js";
import {
  bash,
  leaked,
  makeFixture,
  output,
  settingsFrom,
  SECRET,
  type Fixture,
} from "./fixture.js";

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bin/warren");
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

let fx: Fixture;
beforeEach(() => {
  fx = makeFixture({ sandbox: "on" });
});
afterEach(() => fx.cleanup());

describe("secrets out of reach", () => {
  it("bwrap works on this machine (CI installs it; the cases below need it)", async () => {
    expect(await probeBwrap("bwrap")).toEqual({ ok: true });
  });

  it("`env` shows no database URL, API key, PG* or WARREN_* variable", async () => {
    const out = output(await bash("env", fx.cwd, settingsFrom()));
    expect(out.exit_code).toBe(0);
    const names = out.output
      .split("\n")
      .map((line) => line.split("=")[0]!)
      .filter(Boolean);
    expect(names).toContain("PATH");
    expect(names).toContain("HOME");
    expect(names.filter((n) => /DATABASE_URL|^PG|_API_KEY$|^OPENAI_|^WARREN_/.test(n))).toEqual([]);
    expect(leaked(out.output)).toEqual([]);
  });

  it("the environment is the allowlist even without the sandbox (sandbox off)", async () => {
    const out = output(await bash("env; set", fx.cwd, settingsFrom({ WARREN_SANDBOX: "off" })));
    expect(leaked(out.output)).toEqual([]);
  });

  it("no other process's environment is readable through /proc", async () => {
    // warren's own /proc/PID/environ holds DATABASE_URL: a fresh PID namespace hides it.
    const out = output(
      await bash(
        `cat /proc/$PPID/environ; cat /proc/1/environ; grep -a -l -s pgpw /proc/[0-9]*/environ; ` +
          `cat /proc/${process.pid}/environ; ls /proc | grep -c '^[0-9]'`,
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(leaked(out.output)).toEqual([]);
    // Only the sandbox's own few processes are visible, never this one's thousands of peers.
    const visible = Number(out.output.trim().split("\n").at(-1));
    expect(visible).toBeLessThan(10);
  });

  it("warren's home (database password, data directory) is hidden", async () => {
    const out = output(
      await bash(
        `cat ${fx.warrenHome}/postgres.json; cat ~/.local/share/warren/pgdata/PG_VERSION; ` +
          `echo listing; ls -A ${fx.warrenHome}`,
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(leaked(out.output)).toEqual([]);
    expect(out.output).toContain("No such file or directory");
    expect(out.output).not.toContain("16");
    expect(out.output.endsWith("listing\n")).toBe(true); // an empty directory
  });

  it("the config file (with its API key) cannot be read", async () => {
    const out = output(
      await bash(`cat ${fx.configFile}; wc -c < ${fx.configFile}`, fx.cwd, settingsFrom()),
    );
    expect(leaked(out.output)).toEqual([]);
    expect(out.output).toContain("Permission denied");
  });

  it("~/.pgpass cannot be read", async () => {
    const out = output(await bash("cat ~/.pgpass; wc -c < ~/.pgpass", fx.cwd, settingsFrom()));
    expect(leaked(out.output)).toEqual([]);
    expect(out.output).toContain("Permission denied");
  });

  it("root inside the sandbox cannot unmount what hides the home (no capabilities)", async () => {
    const out = output(
      await bash(
        `umount ${fx.warrenHome}; umount -l ${fx.configFile}; cat ${fx.warrenHome}/postgres.json ${fx.configFile}`,
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(leaked(out.output)).toEqual([]);
  });

  it("a write into the hidden home lands in a throwaway tmpfs, not warren's home", async () => {
    const out = output(
      await bash(`echo evil > ${fx.warrenHome}/postgres.json; echo done`, fx.cwd, settingsFrom()),
    );
    expect(out.output).toContain("done");
    expect(existsSync(path.join(fx.warrenHome, "postgres.json"))).toBe(true);
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(path.join(fx.warrenHome, "postgres.json"), "utf8")).toContain(
      SECRET.homePassword,
    );
  });

  it("`warren db url` and `warren db status` from the agent's bash give nothing usable", async () => {
    expect(existsSync(path.resolve(BIN, "../../dist/bundle/warren.js")), "npm run build").toBe(
      true,
    );
    const out = output(
      await bash(
        `timeout 20 node ${BIN} db url; echo "url-exit=$?"; node ${BIN} db status --json`,
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(leaked(out.output)).toEqual([]);
    expect(out.output).not.toContain("dbpw");
    // The home it finds is the sandbox's empty one: nothing initialised, no port, no URL.
    expect(out.output).toMatch(/"initialised":false/);
    expect(out.output).not.toContain("54329");
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'psql "$DATABASE_URL" from bash does not reach warren\'s database',
    async () => {
      // warren's URL here is a working one, tagged so a connection through it shows.
      process.env.DATABASE_URL = `${TEST_DATABASE_URL}?application_name=warren_secret_db`;
      const out = output(
        await bash(
          `psql "$DATABASE_URL" -Atc "select current_setting('application_name')"; echo "psql-exit=$?"`,
          fx.cwd,
          settingsFrom(),
        ),
      );
      expect(out.output).not.toContain("warren_secret_db");
    },
  );

  it("shell_env cannot pass or set warren's secrets: a one-line config error", async () => {
    const { writeFileSync } = await import("node:fs");
    for (const bad of [
      { pass: ["DATABASE_URL"] },
      { pass: ["OPENAI_API_KEY"] },
      { pass: ["PGPASSWORD"] },
      { pass: ["WARREN_HOME"] },
      { pass: ["TEST_DATABASE_URL"] },
      { pass: ["GITHUB_API_KEY"] },
      { set: { ANTHROPIC_BASE_URL: "x" } },
      { set: { PGHOST: "127.0.0.1" } },
    ]) {
      writeFileSync(fx.configFile, JSON.stringify({ shell_env: bad }));
      expect(() => loadConfig(process.env), JSON.stringify(bad)).toThrow(ConfigError);
      expect(() => loadConfig(process.env)).toThrow(/never gives its own secrets/);
    }
    writeFileSync(fx.configFile, JSON.stringify({ shell_env: { pass: "HOME" } }));
    expect(() => loadConfig(process.env)).toThrow(/shell_env.pass must be an array/);
  });

  it("shell_env adds what the person asks for, and nothing forbidden gets through anyway", async () => {
    const { writeFileSync } = await import("node:fs");
    process.env.MY_TOKEN = "visible-token";
    try {
      writeFileSync(
        fx.configFile,
        JSON.stringify({ shell_env: { pass: ["MY_TOKEN"], set: { GREETING: "hello" } } }),
      );
      const out = output(await bash("echo $MY_TOKEN $GREETING", fx.cwd, settingsFrom()));
      expect(out.output).toBe("visible-token hello\n");
    } finally {
      delete process.env.MY_TOKEN;
    }
    // The second lock: even a config that skipped validation passes none of them.
    const env = buildToolEnv(
      { pass: ["DATABASE_URL", "OPENAI_API_KEY", "PGPASSWORD"], set: { WARREN_X: "1" } },
      process.env,
    );
    expect(Object.keys(env).filter((k) => /DATABASE|^PG|API_KEY|^WARREN/.test(k))).toEqual([]);
  });
});
