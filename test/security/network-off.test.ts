// `sandbox_network: false` reaches nothing (issue 37, item 1): besides its own network namespace,
// a command runs under apply-seccomp (sandbox/seccomp.ts), so the machine's real PostgreSQL socket
// (/var/run/postgresql, trust auth) and any AF_UNIX connect are refused, in a warm sandbox and per
// call, through the bash tool and through `warren -p`; socketpair and child processes still work.
// SysV IPC is the sandbox's own (--unshare-ipc).
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runHook } from "../../src/hooks/run.js";
import { probeBwrap, sandboxStartNotice } from "../../src/sandbox/launch.js";
import { forgetSeccomp, seccompProgram } from "../../src/sandbox/seccomp.js";
import { closeWarmSandboxes } from "../../src/sandbox/warm.js";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";
import { bash, makeFixture, output, settingsFrom, type Fixture } from "./fixture.js";

const e2e = useE2E();
const hasBwrap = (await probeBwrap("bwrap")).ok;
const SOCKET_DIR = "/var/run/postgresql";
const PSQL = `psql -h ${SOCKET_DIR} -U postgres -Atc 'select 4242' </dev/null`;
const PY_CONNECT = `python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("${SOCKET_DIR}/.s.PGSQL.5432"); print("connected")'`;
const NODE_CONNECT = `node -e 'require("net").connect("${SOCKET_DIR}/.s.PGSQL.5432").on("connect",()=>{console.log("connected");process.exit(0)}).on("error",e=>{console.log(e.code);process.exit(1)})'`;

/** Whether the machine's PostgreSQL socket answers outside the sandbox (the control). */
function psqlWorksOutside(): boolean {
  try {
    return execFileSync("bash", ["-c", PSQL], { encoding: "utf8" }).includes("4242");
  } catch {
    return false;
  }
}

/** The machine's PostgreSQL answers on its socket (not on a new machine: these tests then skip). */
const machinePg = hasBwrap && psqlWorksOutside();

describe.skipIf(!hasBwrap)("a Unix socket of the test's own, with the network off", () => {
  let fx: Fixture;
  let server: net.Server;
  let socketPath: string;
  beforeEach(async () => {
    fx = makeFixture({ sandbox: "on", sandbox_network: false });
    socketPath = path.join(fx.base, "own.sock");
    server = net.createServer((c) => c.end("hello from the socket\n"));
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });
  afterEach(async () => {
    closeWarmSandboxes();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fx.cleanup();
  });

  it("is refused inside (warm and per call) and answers outside and with the network on", async () => {
    const connect = `node -e 'require("net").connect(${JSON.stringify(socketPath)}).on("data",d=>{process.stdout.write(String(d));process.exit(0)}).on("error",e=>{console.log(e.code);process.exit(1)})'`;
    // Asynchronously: the server answers from this very process.
    const outside = await promisify(execFile)("bash", ["-c", connect], { encoding: "utf8" });
    expect(outside.stdout).toContain("hello from");
    for (let i = 0; i < 2; i++) {
      const inside = output(await bash(`echo ran; ${connect}`, fx.cwd, settingsFrom()));
      expect(inside.output).toMatch(/^ran\n/);
      expect(inside.output).not.toContain("hello from");
      expect(inside.output).toContain("EPERM");
    }
    const hook = await runHook(`${connect}; exit 0`, "{}", {
      cwd: fx.cwd,
      projectDir: fx.cwd,
      shell: settingsFrom(),
      signal: new AbortController().signal,
      timeoutSeconds: 30,
    });
    expect(hook.kind === "exited" ? hook.stdout : "").not.toContain("hello from");
    writeFileSync(fx.configFile, JSON.stringify({ sandbox: "on", sandbox_network: true }));
    const on = output(await bash(connect, fx.cwd, settingsFrom()));
    expect(on.output).toContain("hello from");
  });
});

describe.skipIf(!machinePg)("sandbox_network: false refuses Unix sockets", () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeFixture({ sandbox: "on", sandbox_network: false });
  });
  afterEach(() => {
    closeWarmSandboxes();
    fx.cleanup();
  });

  it("the filter is there, and the socket answers outside (so the test can fail)", () => {
    expect(seccompProgram()).toMatchObject({ ok: true });
    expect(psqlWorksOutside()).toBe(true);
  });

  it("psql, a python and a node connect all fail in a warm sandbox, call after call", async () => {
    const shell = settingsFrom();
    for (let i = 0; i < 2; i++) {
      // `echo ran` first: the command itself ran, and the refusal is its connect's.
      const psql = output(await bash(`echo ran; ${PSQL}`, fx.cwd, shell));
      expect(psql.output).toMatch(/^ran\n/);
      expect(psql.output).not.toContain("4242");
      expect(psql.output).toContain("could not create socket: Operation not permitted");
      expect(psql.exit_code).not.toBe(0);
      const py = output(await bash(`echo ran; ${PY_CONNECT}`, fx.cwd, shell));
      expect(py.output).toMatch(/^ran\n/);
      expect(py.output).not.toContain("connected");
      expect(py.output).toContain("PermissionError");
      const node = output(await bash(NODE_CONNECT, fx.cwd, shell));
      expect(node.output).not.toContain("connected");
    }
  });

  it("the network on: the same psql works (the control for the tests above)", async () => {
    writeFileSync(fx.configFile, JSON.stringify({ sandbox: "on", sandbox_network: true }));
    const psql = output(await bash(PSQL, fx.cwd, settingsFrom()));
    expect(psql.output).toContain("4242");
  });

  it("per call (a hook) too", async () => {
    const run = await runHook(`echo ran; ${PSQL}; ${PY_CONNECT}; exit 0`, "{}", {
      cwd: fx.cwd,
      projectDir: fx.cwd,
      shell: settingsFrom(),
      signal: new AbortController().signal,
      timeoutSeconds: 30,
    });
    expect(run.kind).toBe("exited");
    const text = run.kind === "exited" ? run.stdout + run.stderr : "";
    expect(text).not.toContain("4242");
    expect(text).toMatch(/^ran\n/);
    expect(text).not.toContain("connected");
    expect(text).toContain("could not create socket: Operation not permitted");
    expect(text).toContain("PermissionError");
  });

  it("socketpair, child processes, pipes and git still work", async () => {
    const shell = settingsFrom();
    const pair = output(
      await bash(
        `python3 -c 'import socket; a,b=socket.socketpair(); a.send(b"hi"); print(b.recv(2).decode())'`,
        fx.cwd,
        shell,
      ),
    );
    expect(pair.output.trim()).toBe("hi");
    const child = output(
      await bash(
        `node -e 'console.log(require("child_process").execFileSync("sh",["-c","echo child ok | cat"]).toString().trim())'`,
        fx.cwd,
        shell,
      ),
    );
    expect(child.output.trim()).toBe("child ok");
    const git = output(
      await bash("git init -q . && git status --short && echo git ok", fx.cwd, shell),
    );
    expect(git.output).toContain("git ok");
  });

  it("SysV IPC is the sandbox's own", async () => {
    const id = execFileSync("ipcmk", ["-M", "64"], { encoding: "utf8" }).match(/(\d+)/)![1]!;
    try {
      const seen = output(await bash("ipcs -m", fx.cwd, settingsFrom()));
      expect(seen.output).toContain("Shared Memory Segments");
      expect(seen.output).not.toMatch(new RegExp(`\\b${id}\\b`));
    } finally {
      execFileSync("ipcrm", ["-m", id]);
    }
    // The control: outside the sandbox it is listed.
  });
});

describe.skipIf(!hasBwrap)("without the filter binary", () => {
  let fx: Fixture;
  afterEach(() => {
    delete process.env.WARREN_APPLY_SECCOMP;
    forgetSeccomp();
    closeWarmSandboxes();
    fx.cleanup();
  });

  it('sandbox "on" refuses with one line; "auto" runs with --unshare-net only', async () => {
    fx = makeFixture({ sandbox: "on", sandbox_network: false });
    process.env.WARREN_APPLY_SECCOMP = path.join(fx.base, "no-such-apply-seccomp");
    forgetSeccomp();
    expect(existsSync(process.env.WARREN_APPLY_SECCOMP)).toBe(false);
    const refused = await bash("echo ran", fx.cwd, settingsFrom());
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe("NOT_ALLOWED");
      expect(refused.error.message).toMatch(/Unix sockets would stay reachable; nothing was run$/);
      expect(refused.error.message).not.toContain("\n");
    }
    writeFileSync(fx.configFile, JSON.stringify({ sandbox: "auto", sandbox_network: false }));
    const ran = output(await bash("echo ran", fx.cwd, settingsFrom()));
    expect(ran.output.trim()).toBe("ran");
    expect(await sandboxStartNotice(settingsFrom().sandbox)).toMatch(
      /^sandbox: .*no-such-apply-seccomp is missing .*Unix sockets/,
    );
  });
});

describe.skipIf(!machinePg)("through warren -p", () => {
  it("the root's bash cannot reach the machine's PostgreSQL socket with the network off", async () => {
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "bash", arguments: { command: `echo ran; ${PSQL}; ${PY_CONNECT}` } }],
        },
      },
      { agent: "root", match: after("bash"), reply: { text: "tried" } },
    ]);
    const run = await e2e.prompt("reach the database", {
      config: { sandbox: "on", sandbox_network: false },
      env: { WARREN_APPROVE: "all" },
    });
    expect(run.json?.text, run.stderr).toBe("tried");
    const [, second] = requestsOf(e2e.fake(), "root");
    const text = JSON.stringify(lastToolResults(second!)[0]!.value);
    expect(text).not.toContain("4242");
    expect(text).toContain("ran\\n");
    expect(text).not.toContain("connected");
    expect(text).toContain("could not create socket: Operation not permitted");
  }, 120_000);
});
