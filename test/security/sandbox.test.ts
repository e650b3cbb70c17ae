// The OS sandbox for bash (SPEC section 3): a hostile model tries to write outside its working
// directory every way it can; each write fails with the command's own error while writing inside
// works, /tmp is private, the network is the config's, and interrupt and timeout still kill
// everything it started. Without bwrap, `auto` runs unconfined after one line and `on` refuses.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { probeBwrap, sandboxStartNotice, sandboxStatus } from "../../src/sandbox/launch.js";
import type { ShellSettings } from "../../src/sandbox/settings.js";
import { resetSandboxProbes } from "../../src/sandbox/warm.js";
import { bash, makeFixture, output, settingsFrom, type Fixture } from "./fixture.js";

let fx: Fixture;
beforeEach(() => {
  fx = makeFixture({ sandbox: "on" });
});
afterEach(() => fx.cleanup());

/** Live host pids whose command line starts with `prefix`. */
function processesWith(prefix: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmdline.startsWith(prefix) && state !== "Z") found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

describe("the sandbox holds writes to the working directory", () => {
  it("bwrap works on this machine (CI installs it)", async () => {
    expect(await probeBwrap("bwrap")).toEqual({ ok: true });
    expect((await sandboxStatus(settingsFrom().sandbox)).state).toBe("on");
  });

  const escapes: [string, (target: string) => string][] = [
    ["touch", (t) => `touch ${t}`],
    ["a redirection", (t) => `echo pwned > ${t}`],
    ["cd .. && touch", () => `cd .. && touch outside/escaped`],
    ["a node one-liner", (t) => `node -e 'require("fs").writeFileSync(${JSON.stringify(t)}, "x")'`],
    ["a python one-liner", (t) => `python3 -c 'open(${JSON.stringify(t)}, "w").write("x")'`],
    ["cp", (t) => `echo x > mine && cp mine ${t}`],
    [
      "a symlink out of the working directory",
      () => `ln -s ../outside door && echo x > door/escaped`,
    ],
    ["tee through a pipe", (t) => `echo x | tee ${t}`],
    ["a bash -c inside", (t) => `bash -c 'echo x > ${t}'`],
    ["mv of a file made inside", (t) => `echo x > mine && mv mine ${t}`],
    ["mkdir", () => `mkdir ../outside/escaped`],
    ["a write in HOME", () => `echo x > ~/escaped`],
  ];

  it.each(escapes)("%s outside fails with the command's own error", async (_label, make) => {
    const target = path.join(fx.outside, "escaped");
    const out = output(await bash(`${make(target)}; echo "exit=$?"`, fx.cwd, settingsFrom()));
    expect(out.output).toMatch(/Read-only file system|EROFS|Errno 30/);
    expect(out.output).not.toContain("exit=0");
    expect(existsSync(target)).toBe(false);
    expect(existsSync(path.join(fx.home, "escaped"))).toBe(false);
  });

  it("writing inside the working directory works (the same four ways)", async () => {
    const out = output(
      await bash(
        `touch a && echo x > b && mkdir -p sub && (cd sub && touch c) && ` +
          `node -e 'require("fs").writeFileSync("d", "x")' && python3 -c 'open("e", "w").write("x")'`,
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(out.exit_code).toBe(0);
    for (const f of ["a", "b", "sub/c", "d", "e"])
      expect(existsSync(path.join(fx.cwd, f))).toBe(true);
  });

  it("/tmp is private: a write there never reaches the real /tmp, and the real one is unseen", async () => {
    const marker = `warren-private-${process.pid}-${Date.now()}`;
    writeFileSync(`/tmp/${marker}.host`, "host");
    try {
      const out = output(
        await bash(
          `echo x > /tmp/${marker}.inside && cat /tmp/${marker}.inside; ls /tmp/${marker}.host`,
          fx.cwd,
          settingsFrom(),
        ),
      );
      expect(out.output).toContain("x\n");
      expect(out.output).toContain("No such file or directory");
      expect(existsSync(`/tmp/${marker}.inside`)).toBe(false);
    } finally {
      const { rmSync } = await import("node:fs");
      rmSync(`/tmp/${marker}.host`, { force: true });
    }
  });

  it("a path the config adds (sandbox_writable) is writable", async () => {
    const extra = path.join(fx.base, "cache");
    mkdirSync(extra);
    writeFileSync(fx.configFile, JSON.stringify({ sandbox: "on", sandbox_writable: [extra] }));
    const out = output(await bash(`echo x > ${extra}/ok`, fx.cwd, settingsFrom()));
    expect(out.exit_code).toBe(0);
    expect(existsSync(path.join(extra, "ok"))).toBe(true);
  });

  it("the network is on by default and off with sandbox_network: false", async () => {
    const server = (await import("node:net")).createServer((s) => s.end("hello\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
      expect(output(await bash(probe, fx.cwd, settingsFrom())).output).toBe("hello\n");
      writeFileSync(fx.configFile, JSON.stringify({ sandbox: "on", sandbox_network: false }));
      const off = output(await bash(probe, fx.cwd, settingsFrom()));
      expect(off.output).not.toContain("hello");
      expect(off.exit_code).not.toBe(0);
    } finally {
      server.close();
    }
  });

  it("abort kills every process the sandboxed command started", async () => {
    const marker = `${7000 + (process.pid % 1000)}.${Date.now() % 1000}`;
    const controller = new AbortController();
    const pending = bash(
      `sleep ${marker} & sleep ${marker} & sleep ${marker}; wait`,
      fx.cwd,
      settingsFrom(),
      controller.signal,
    );
    expect(await until(() => processesWith(`sleep ${marker}`).length === 3, 5000)).toBe(true);
    controller.abort();
    expect(output(await pending)).toMatchObject({ interrupted: true });
    expect(await until(() => processesWith(`sleep ${marker}`).length === 0, 2000)).toBe(true);
  });

  it("a timeout kills every process the sandboxed command started", async () => {
    const marker = `${8000 + (process.pid % 1000)}.${Date.now() % 1000}`;
    const started = Date.now();
    const outcome = await (
      await import("../../src/tools/bash.js")
    ).bashTool.run(
      { command: `setsid sleep ${marker} & sleep ${marker} & sleep ${marker}; wait`, timeout: 1 },
      { cwd: fx.cwd, signal: new AbortController().signal, shell: settingsFrom() },
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(output(outcome)).toMatchObject({ timed_out: true });
    // Even the one that left the process group dies with the sandbox's PID namespace.
    expect(await until(() => processesWith(`sleep ${marker}`).length === 0, 2000)).toBe(true);
  });
});

describe("without bwrap", () => {
  afterEach(() => resetSandboxProbes());
  const missing = { WARREN_BWRAP: "/nonexistent/bwrap" };

  it("auto says so in one line at start and runs bash unconfined", async () => {
    writeFileSync(fx.configFile, JSON.stringify({}));
    const settings = settingsFrom(missing);
    expect(settings.sandbox.mode).toBe("auto");
    const notice = await sandboxStartNotice(settings.sandbox);
    expect(notice).toBeDefined();
    expect(notice!.split("\n")).toHaveLength(1);
    expect(notice).toMatch(
      /\/nonexistent\/bwrap not found.*unconfined.*apt-get install bubblewrap/,
    );
    expect((await sandboxStatus(settings.sandbox)).state).toBe("unavailable");
    const target = path.join(fx.outside, "unconfined");
    const out = output(await bash(`touch ${target}`, fx.cwd, settings));
    expect(out.exit_code).toBe(0);
    expect(existsSync(target)).toBe(true);
  });

  it("on refuses to run bash at all (NOT_ALLOWED), and nothing runs", async () => {
    const settings = settingsFrom(missing);
    expect(settings.sandbox.mode).toBe("on");
    const target = path.join(fx.cwd, "ran");
    const outcome = await bash(`touch ${target}`, fx.cwd, settings);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error.code).toBe("NOT_ALLOWED");
      expect(outcome.error.message).toMatch(/sandbox is required.*not found.*nothing was run/);
    }
    expect(existsSync(target)).toBe(false);
    expect(await sandboxStartNotice(settings.sandbox)).toBeUndefined();
  });

  it("a bad sandbox setting is a one-line config error", () => {
    writeFileSync(fx.configFile, JSON.stringify({ sandbox: "yes" }));
    expect(() => loadConfig(process.env)).toThrow(/sandbox must be "auto", "on" or "off"/);
    writeFileSync(fx.configFile, JSON.stringify({ sandbox_writable: ["relative/path"] }));
    expect(() => loadConfig(process.env)).toThrow(/sandbox_writable must be an array of absolute/);
    writeFileSync(fx.configFile, JSON.stringify({ sandbox_network: "no" }));
    expect(() => loadConfig(process.env)).toThrow(
      /sandbox_network must be true, false or \{"allow"/,
    );
  });
});

function withWritable(settings: ShellSettings, dir: string): ShellSettings {
  return { ...settings, sandbox: { ...settings.sandbox, writable: [dir] } };
}

describe("an isolated child's worktree", () => {
  it("reads its repository's git directory but cannot plant a hook in it", async () => {
    // The repository under /tmp, which the sandbox replaces with a private one: its git
    // directory must still be seen (read-only) for git to work in the worktree.
    const repo = path.join(fx.outside, "repo");
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", repo, ...args], {
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@t",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@t",
        },
      });
    git("init", "-q");
    writeFileSync(path.join(repo, "a.txt"), "a\n");
    git("add", "a.txt");
    git("commit", "-qm", "a");
    const worktree = path.join(repo, ".warren", "worktrees", "w1");
    git("worktree", "add", "-q", "-b", "warren/w1", worktree);
    const hook = path.join(repo, ".git", "hooks", "post-merge");
    const out = output(
      await bash(
        `git branch --show-current; echo 'touch pwned' > ${hook}; echo "exit=$?"`,
        worktree,
        // Even where the config makes the whole repository writable.
        withWritable(settingsFrom(), repo),
      ),
    );
    expect(out.output).toContain("warren/w1");
    expect(out.output).toMatch(/Read-only file system/);
    expect(existsSync(hook)).toBe(false);
  });
});

describe("a `.git` pointer the command writes itself", () => {
  // An agent whose working directory has no `.git` may make one (a linked worktree's pointer
  // file). What it names must not become a mount of the next sandbox: a `commondir` naming /proc
  // would put the host's processes (and warren's environment) in view, one naming /tmp the
  // host's /tmp over the private one. Seen failing before the check: 101 host processes and the
  // host's marker file listed.
  it.each(["/proc", "/tmp"])("naming %s as the common directory opens nothing", async (target) => {
    const marker = `warren-gitdir-${process.pid}-${Date.now()}`;
    writeFileSync(`/tmp/${marker}.host`, "host");
    try {
      const plant =
        `mkdir -p fake && echo ${target} > fake/commondir && echo "$PWD/.git" > fake/gitdir && ` +
        `echo "gitdir: $PWD/fake" > .git && echo planted`;
      expect(output(await bash(plant, fx.cwd, settingsFrom())).output).toContain("planted");
      const out = output(
        await bash(
          `ls /proc | grep -c '^[0-9]'; ls /tmp/${marker}.host 2>&1`,
          fx.cwd,
          settingsFrom(),
        ),
      );
      const processes = Number(out.output.split("\n")[0]);
      expect(processes).toBeGreaterThan(0);
      expect(processes).toBeLessThan(10);
      expect(out.output).toContain("No such file or directory");
    } finally {
      const { rmSync } = await import("node:fs");
      rmSync(`/tmp/${marker}.host`, { force: true });
    }
  });
});

describe("a configuration entry the command made a link", () => {
  // `.claude`, `.git` and the like are bound read-only where they exist; one that did not exist
  // is the command's to make, as a link to anywhere. Seen failing before the check: a link to
  // /proc or /tmp made every later launch in the directory fail ("bwrap: Can't bind mount"),
  // hooks included, whose failure an ordinary hook's exit 1 reads as.
  it.each([
    [".claude", "/proc"],
    [".git", "/tmp"],
    [".mcp.json", "/nonexistent/x"],
  ])("%s → %s: the next launch starts, with nothing of the target's mounted", async (entry, to) => {
    const marker = `warren-link-${process.pid}-${Date.now()}`;
    writeFileSync(`/tmp/${marker}.host`, "host");
    try {
      const plant = `ln -s ${to} ${entry} && echo planted`;
      expect(output(await bash(plant, fx.cwd, settingsFrom())).output).toContain("planted");
      const out = output(
        await bash(`ls /proc | grep -c '^[0-9]'; ls /tmp/${marker}.host`, fx.cwd, settingsFrom()),
      );
      expect(Number(out.output.split("\n")[0])).toBeGreaterThan(0);
      expect(Number(out.output.split("\n")[0])).toBeLessThan(10);
      expect(out.output).toContain("No such file or directory");
    } finally {
      const { rmSync } = await import("node:fs");
      rmSync(`/tmp/${marker}.host`, { force: true });
    }
  });

  it("a link to a directory inside the working directory is bound read-only there", async () => {
    mkdirSync(path.join(fx.cwd, "shared-claude"));
    const { symlinkSync } = await import("node:fs");
    symlinkSync("shared-claude", path.join(fx.cwd, ".claude"));
    const out = output(
      await bash(`echo x > .claude/settings.json; echo "exit=$?"`, fx.cwd, settingsFrom()),
    );
    expect(out.output).toMatch(/Read-only file system/);
    expect(existsSync(path.join(fx.cwd, "shared-claude", "settings.json"))).toBe(false);
  });
});

describe("a parent's bash against its isolated child's worktree", () => {
  // The child's working directory lies in the parent's `.warren/worktrees/`. Were that writable in
  // the parent's sandbox, its bash could swap the child's directory for a link to `/`, and the
  // child's next sandbox would bind the whole filesystem writable (seen failing before: the
  // child's `touch` outside succeeded).
  it("cannot swap the child's directory for a link: the parent's .warren/worktrees is read-only", async () => {
    const worktrees = path.join(fx.cwd, ".warren", "worktrees");
    const child = path.join(worktrees, "c1");
    mkdirSync(child, { recursive: true });
    writeFileSync(path.join(child, "f"), "child's\n");
    const swap = output(
      await bash(
        `rm -rf .warren/worktrees/c1; ln -s / .warren/worktrees/c1; echo "exit=$?"`,
        fx.cwd,
        settingsFrom(),
      ),
    );
    expect(swap.output).toMatch(/Read-only file system/);
    expect(readFileSync(path.join(child, "f"), "utf8")).toBe("child's\n");
    // The child still writes its own directory.
    const own = output(await bash(`echo mine > g && cat g`, child, settingsFrom()));
    expect(own.output).toBe("mine\n");
  });

  it("a working directory that became a link is refused, nothing run", async () => {
    const target = path.join(fx.base, "elsewhere");
    mkdirSync(target);
    const link = path.join(fx.cwd, "moved");
    const { symlinkSync } = await import("node:fs");
    symlinkSync(target, link);
    const out = await bash(`touch escaped`, link, settingsFrom());
    expect(JSON.stringify(out)).toMatch(/reached through a link/);
    expect(existsSync(path.join(target, "escaped"))).toBe(false);
  });
});
