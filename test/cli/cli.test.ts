// The command line end to end: the real bin/warren (bundled to dist/ by `npm test`) as a child
// process against a per-file test database, asserting on exit codes and what a user would read.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/agents/events.js";
import { forkAgent, latestRoot } from "../../src/agents/tree.js";
import { mail } from "../../src/mail/mail.sql.js";
import { useTestDatabase } from "../support/db.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bin = path.join(root, "bin", "warren");
const built = path.join(root, "dist", "bundle", "warren.js");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const database = useTestDatabase();
let home: string;

beforeAll(async () => {
  if (!existsSync(built)) {
    throw new Error(`${built} is missing: run \`npm run build\` (npm test does)`);
  }
  home = await fs.mkdtemp(path.join(os.tmpdir(), "warren-cli-test-"));
});

afterAll(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

/** Runs bin/warren with a clean environment: the test database, temp homes, no model, no color. */
function warren(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(OPENAI_|WARREN_|DATABASE_URL$|NO_COLOR$|FORCE_COLOR$)/.test(key),
    ),
  );
  const childEnv = {
    ...inherited,
    DATABASE_URL: database().url,
    WARREN_HOME: path.join(home, "data"),
    XDG_CONFIG_HOME: path.join(home, "config"),
    NO_COLOR: "1",
    ...env,
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: childEnv, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const lines = (text: string) => text.split("\n").filter((line) => line.length > 0);

describe("help and usage", () => {
  it("prints help for the top level and every subcommand, exit 0", async () => {
    const top = await warren(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain("Usage:");
    expect(top.stdout).toContain("[--output-schema FILE]");
    expect(top.stdout).toMatch(/ {2}--output-schema FILE\n +with -p: FILE is a JSON Schema/);
    const commands = [
      "ls",
      "log",
      "send",
      "stop",
      "kill",
      "reap",
      "export",
      "worker",
      "db",
      "doctor",
      "migrate",
    ];
    for (const command of commands) expect(top.stdout).toContain(`  ${command} `);
    const runs = await Promise.all(commands.map((command) => warren([command, "--help"])));
    runs.forEach((run, i) => {
      expect(run.code, commands[i]).toBe(0);
      expect(run.stdout, commands[i]).toContain(`Usage: warren ${commands[i]}`);
      expect(run.stderr).toBe("");
    });
    expect((await warren(["help", "send"])).stdout).toContain("Usage: warren send");
    expect((await warren(["log", "-h"])).code).toBe(0);
  });

  it("prints the version", async () => {
    const run = await warren(["--version"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^warren \d+\.\d+\.\d+/);
  });

  it("rejects an unknown command with exit 2 and the list of commands", async () => {
    const run = await warren(["frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain('unknown command "frobnicate"');
    expect(run.stderr).toContain("ls, log, search, send");
    expect(run.stderr).toContain("warren --help");
  });

  it("rejects bad arguments with exit 2", async () => {
    const cases = [
      ["-p"],
      ["-p", ""],
      ["-p", "hello", "--timeout", "abc"],
      ["-p", "hello", "--timeout", "0"],
      ["-p", "hello", "--new"],
      ["--json"],
      ["--new", "--tree", "abcd"],
      ["ls", "--bogus"],
      ["log"],
      ["send", "root"],
      ["export", "--format", "xml"],
      ["worker", "--concurrency", "0"],
      ["worker", "--threads", "two"],
      ["db"],
      ["db", "restart"],
      ["--output-schema", "schema.json"],
    ];
    const runs = await Promise.all(cases.map((args) => warren(args)));
    runs.forEach((run, i) => {
      expect(run.code, cases[i]!.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/^warren: .+\nRun 'warren( \w+)? --help' for usage\.\n$/);
    });
    // node's parseArgs wording, cut to a line of ours.
    expect(runs[0]!.stderr).toMatch(/^warren: -p, --prompt needs a value\n/);
    expect(runs[7]!.stderr).toMatch(/^warren: unknown option --bogus\n/);
    expect(runs.at(-1)!.stderr).toMatch(/^warren: --output-schema goes with -p\n/);
  });

  it("reports a bad config file with exit 2", async () => {
    const config = path.join(home, "bad-config");
    await fs.mkdir(path.join(config, "warren"), { recursive: true });
    await fs.writeFile(path.join(config, "warren", "config.json"), "{ not json");
    const run = await warren(["worker"], { XDG_CONFIG_HOME: config });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^warren: .*config\.json is not valid JSON/);
  });
});

describe("against the database", () => {
  it("ls on a fresh database lists nothing; plain `warren` then creates a root", async () => {
    const empty = await warren(["ls", "--json"]);
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual([]);

    const start = await warren([]);
    expect(start.code).toBe(0);
    expect(start.stdout).toMatch(/^tree [0-9a-f]{8} · 1 agent: 1 idle$/m);
    expect(start.stdout).toMatch(/^root [0-9a-f]{8}\s+idle\s/m);
    expect(start.stdout).toContain("the TUI needs a terminal");

    const listed = await warren(["ls", "--json"]);
    expect(listed.code).toBe(0);
    const agents = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(agents).toHaveLength(1);
    expect(agents[0]).toMatchObject({ name: "root", parent_id: null, state: "idle" });
    expect(agents[0]!.tree_id).toBe(agents[0]!.id);

    // Plain `warren` again reopens the same tree rather than creating another.
    await warren([]);
    expect(JSON.parse((await warren(["ls", "--json"])).stdout)).toHaveLength(1);
  });

  it("send to an unknown agent exits 1 with one line", async () => {
    const run = await warren(["send", "nobody", "hello"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(lines(run.stderr)).toEqual(['warren: no agent "nobody" in this tree']);
  });

  it("send honours the config's limits.maxMessageBytes, not the default 64 KiB", async () => {
    const configFile = path.join(home, "small-mail.json");
    await fs.writeFile(configFile, JSON.stringify({ limits: { maxMessageBytes: 10 } }));
    const run = await warren(["send", "root", "eleven bytes"], { WARREN_CONFIG: configFile });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      "warren: message is 12 bytes; the limit is 10 bytes (0 KiB)",
    ]);
    const fits = await warren(["send", "root", "ten bytes!"], { WARREN_CONFIG: configFile });
    expect(fits.code).toBe(0);
  });

  it("send to an agent inserts mail from the person", async () => {
    const { db } = database();
    const rootAgent = (await latestRoot(db))!;
    const run = await warren(["send", "root", "please", "look", "at", "parser.ts"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^sent mail #\\d+ to root ${rootAgent.id.slice(0, 8)}\\n$`),
    );
    const mailId = Number(/#(\d+)/.exec(run.stdout)![1]);
    const [row] = await db.select().from(mail).where(eq(mail.id, mailId));
    expect(row).toMatchObject({
      tree_id: rootAgent.id,
      from_id: null,
      to_id: rootAgent.id,
      body: "please look at parser.ts",
      consumed_at: null,
    });
  });

  it("ls shows a tree indented, and log renders an agent's transcript", async () => {
    const { db } = database();
    const rootAgent = (await latestRoot(db))!;
    await appendEvent(db, rootAgent.id, "user", "find the bug");
    await appendEvent(db, rootAgent.id, "assistant", "Looking into it.");
    await appendEvent(db, rootAgent.id, "tool_call", "", {
      name: "bash",
      arguments: '{"command":"ls"}',
    });
    const longResult = Array.from({ length: 40 }, (_, i) => `file-${i}.ts`).join("\n");
    await appendEvent(db, rootAgent.id, "tool_result", longResult, { name: "bash" });
    const scout = await forkAgent(db, rootAgent.id, { name: "scout", prompt: "read parser.ts" });
    await appendEvent(db, rootAgent.id, "capture", "a draft, never sent");
    await appendEvent(
      db,
      rootAgent.id,
      "mail_in",
      JSON.stringify({ from: scout.id, from_name: "scout", message: "found it" }),
    );
    await appendEvent(db, rootAgent.id, "error", "the model failed");
    // An answer that only called tools: its calls are its lines, no empty "●".
    await appendEvent(db, rootAgent.id, "assistant", "", { tool_calls: [{ name: "glob" }] });

    const listed = await warren(["ls"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^└─ scout ${scout.id.slice(0, 8)}\\s+running\\s`, "m"),
    );

    const run = await warren(["log", "root"]);
    expect(run.code).toBe(0);
    const out = run.stdout;
    expect(out).toContain("❯ find the bug");
    expect(out).toContain("● Looking into it.");
    expect(out).toContain('→ bash({"command":"ls"})');
    expect(out).toContain("← bash: file-0.ts");
    expect(out).toMatch(/… \(\d+ more lines\)/);
    expect(out).not.toContain("file-39.ts");
    expect(out).toContain(`↳ forked scout ${scout.id.slice(0, 8)}`);
    expect(out).toContain("✎ capture a draft, never sent");
    expect(out).toContain(`✉ from scout ${scout.id.slice(0, 8)}: found it`);
    expect(out).toContain("⚠ the model failed");
    expect(out).not.toMatch(/^●\s*$/m);

    const full = await warren(["log", "root", "--full"]);
    expect(full.stdout).toContain("file-39.ts");

    // A unique id prefix, and JSON output.
    const json = await warren(["log", scout.id.slice(0, 6), "--json"]);
    expect(json.code).toBe(0);
    const events = JSON.parse(json.stdout) as Array<{ kind: string; content: string }>;
    expect(events).toEqual([expect.objectContaining({ kind: "user", content: "read parser.ts" })]);
  });

  it("export --format json holds every agent with its events", async () => {
    const { db } = database();
    const rootAgent = (await latestRoot(db))!;
    const run = await warren(["export", rootAgent.id.slice(0, 8), "--format", "json"]);
    expect(run.code).toBe(0);
    const exported = JSON.parse(run.stdout) as {
      tree_id: string;
      agents: Array<{ id: string; name: string; events: Array<{ kind: string }> }>;
    };
    expect(exported.tree_id).toBe(rootAgent.id);
    expect(exported.agents.map((a) => a.name)).toEqual(["root", "scout"]);
    expect(exported.agents[0]!.events.map((e) => e.kind)).toContain("tool_result");

    const md = await warren(["export"]);
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/^# warren tree [0-9a-f]{8}$/m);
    expect(md.stdout).toMatch(/^## root [0-9a-f]{8}$/m);
    expect(md.stdout).toMatch(/^### scout [0-9a-f]{8}$/m);
    expect(md.stdout).toContain("file-39.ts"); // exports are never truncated

    const file = path.join(home, "tree.md");
    const toFile = await warren(["export", "-o", file]);
    expect(toFile.stdout).toBe(`wrote ${file}\n`);
    expect(await fs.readFile(file, "utf8")).toBe(`${md.stdout}`);
  });

  it("kill refuses the root; kills a child; reap hides it", async () => {
    const rootKill = await warren(["kill", "root"]);
    expect(rootKill.code).toBe(1);
    expect(lines(rootKill.stderr)).toEqual(["warren: the root agent cannot be killed"]);

    const killed = await warren(["kill", "scout"]);
    expect(killed.code).toBe(0);
    expect(killed.stdout).toMatch(/^killed scout [0-9a-f]{8}\n$/);
    expect((await warren(["log", "scout"])).stdout).toContain("✗ killed by the person");

    const reaped = await warren(["reap"]);
    expect(reaped.stdout).toMatch(/^reaped 1 dead agent in tree [0-9a-f]{8}\n$/);
    const names = (
      JSON.parse((await warren(["ls", "--json"])).stdout) as Array<{ name: string }>
    ).map((a) => a.name);
    expect(names).toEqual(["root"]);
    expect((await warren(["ls", "--all"])).stdout).toContain("dead (reaped)");
  });

  it("--new starts another tree, and --tree picks one by prefix", async () => {
    const { db } = database();
    const first = (await latestRoot(db))!;
    const created = await warren(["--new"]);
    expect(created.code).toBe(0);
    const second = (await latestRoot(db))!;
    expect(second.id).not.toBe(first.id);
    expect(created.stdout).toContain(`tree ${second.id.slice(0, 8)}`);

    const picked = await warren(["ls", "--tree", first.id.slice(0, 8)]);
    expect(picked.stdout).toContain(`tree ${first.id.slice(0, 8)}`);
    const missing = await warren(["ls", "--tree", "ffffffff"]);
    expect(missing.code).toBe(1);
    expect(lines(missing.stderr)).toEqual(['warren: no tree "ffffffff"']);
  });

  it("migrate and db status report on the database in use", async () => {
    const migrated = await warren(["migrate"]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain("database is up to date");
    const status = await warren(["db", "status", "--json"]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ source: "DATABASE_URL", reachable: true });
    const stop = await warren(["db", "stop"]);
    expect(stop.stdout).toContain("DATABASE_URL is set");
    expect((await warren(["db", "url"])).stdout).toBe(`${database().url}\n`);
  });
});

describe("headless -p", () => {
  it("without a model configured exits 1 with one line, and --json still reports the run", async () => {
    const plain = await warren(["-p", "hello", "--timeout", "30"]);
    expect(plain.code).toBe(1);
    expect(lines(plain.stderr)).toEqual([expect.stringMatching(/^warren: no model configured/)]);

    const json = await warren(["-p", "hello", "--json", "--timeout", "30"]);
    expect(json.code).toBe(1);
    const result = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(result).toMatchObject({ text: "", tool_calls: 0 });
    expect(result.tree_id).toBe(result.agent_id);
    expect(result.error).toMatch(/^no model configured/);
  });
});

describe("an unreachable database", () => {
  it("exits 1 with a single stderr line that hides the password", async () => {
    const env = { DATABASE_URL: "postgres://x:secret@127.0.0.1:1/db" };
    for (const args of [["ls"], ["send", "root", "hi"], []]) {
      const run = await warren(args, env);
      expect(run.code).toBe(1);
      expect(lines(run.stderr)).toHaveLength(1);
      expect(run.stderr).toMatch(
        /^warren: cannot reach the database at postgres:\/\/x@127\.0\.0\.1:1\/db/,
      );
      expect(run.stderr).not.toContain("secret");
      expect(run.stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
    }
  });
});
