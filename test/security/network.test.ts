// The network gate (SPEC section 3): with `sandbox_network: {"allow": […]}` bash runs in its own
// network namespace and reaches only warren's proxy, through the bridge on 127.0.0.1 inside. A
// listed host:port works (plain HTTP and CONNECT), an unlisted one is a 403 saying how to allow it,
// a name that resolves to loopback is refused unless listed explicitly, and nothing bypasses the
// proxy: no route out of the namespace, no Unix socket. Only 127.0.0.1 is ever contacted.
import { execFileSync, spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentRow } from "../../src/agents/agents.sql.js";
import { capabilitiesOf, childCapabilities } from "../../src/agents/capabilities.js";
import { loadConfig, shellSettingsOf } from "../../src/config/config.js";
import { decideHost, type NetworkRules } from "../../src/sandbox/network/rules.js";
import { closeNetworkProxies } from "../../src/sandbox/network/gate.js";
import { probeBwrap, shellLaunch } from "../../src/sandbox/launch.js";
import type { ShellSettings } from "../../src/sandbox/settings.js";
import { closeWarmSandboxes, warmSandboxPids } from "../../src/sandbox/warm.js";
import { sql } from "drizzle-orm";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";
import { startWarren, warrenEnv } from "../support/warren.js";
import { bash, makeFixture, output, type Fixture } from "./fixture.js";

const e2e = useE2E();

/** The machine's PostgreSQL answers on its socket (not on a new machine: that test then skips). */
const machinePg = (() => {
  try {
    const psql = "psql -h /var/run/postgresql -U postgres -Atc 'select 4242' </dev/null";
    return execFileSync("bash", ["-c", psql], { encoding: "utf8" }).includes("4242");
  } catch {
    return false;
  }
})();

let server: http.Server;
/** A port the gate lists, and one it does not (both served on 127.0.0.1). */
let listed: number;
let unlisted: number;
let other: http.Server;

function serve(): Promise<http.Server> {
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => res.end(`hello from ${req.url}\n`));
    s.listen(0, "127.0.0.1", () => resolve(s));
  });
}

beforeAll(async () => {
  server = await serve();
  other = await serve();
  listed = (server.address() as AddressInfo).port;
  unlisted = (other.address() as AddressInfo).port;
});
afterAll(() => {
  server.close();
  other.close();
});

let fx: Fixture;
beforeEach(() => {
  fx = makeFixture({ sandbox: "on" });
});
afterEach(async () => {
  closeWarmSandboxes();
  await closeNetworkProxies();
  fx.cleanup();
});

/** The shell settings from a config file with this `sandbox_network`. */
function gated(network: unknown): ShellSettings {
  writeFileSync(fx.configFile, JSON.stringify({ sandbox: "on", sandbox_network: network }));
  return shellSettingsOf(loadConfig(process.env));
}

/** Runs `command` through the real bash tool (a warm sandbox, the bridge as its keeper). */
async function run(command: string, shell: ShellSettings): Promise<string> {
  return output(await bash(command, fx.cwd, shell)).output;
}

/** Runs `command` as hooks do: one bwrap per call, the bridge as its first process. */
async function runPerCall(command: string, shell: ShellSettings): Promise<string> {
  const launch = await shellLaunch(shell, fx.cwd, ["bash", "-c", command]);
  if (!launch.ok) throw new Error(launch.message);
  return new Promise((resolve, reject) => {
    const child = spawn(launch.file, launch.args, {
      cwd: fx.cwd,
      env: launch.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.stderr.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve(`${text}exit=${code}\n`));
  });
}

const curl = (url: string, extra = "") => `curl -sS --max-time 10 ${extra} ${url}; echo " exit=$?"`;

describe("the network gate", () => {
  it("bwrap works on this machine (CI installs it)", async () => {
    expect(await probeBwrap("bwrap")).toEqual({ ok: true });
  });

  it("a listed host:port works, over plain HTTP and CONNECT, warm and per call", async () => {
    const shell = gated({ allow: [`127.0.0.1:${listed}`] });
    const url = `http://127.0.0.1:${listed}/plain`;
    expect(await run(curl(url), shell)).toContain("hello from /plain");
    const tunnel = `http://127.0.0.1:${listed}/tunnel`;
    expect(await run(curl(tunnel, "--proxytunnel"), shell)).toContain("hello from /tunnel");
    expect(await runPerCall(curl(url), shell)).toContain("hello from /plain");
    // The bash calls ran in one warm sandbox, kept between calls, the bridge as its keeper.
    const pids = warmSandboxPids();
    expect(pids).toHaveLength(1);
    expect(readFileSync(`/proc/${pids[0]}/cmdline`, "utf8")).toContain("warren bridge");
    expect(await run(curl(url), shell)).toContain("hello from /plain");
    expect(warmSandboxPids()).toEqual(pids);
  });

  it("the command's environment points at the bridge, with nothing exempted", async () => {
    const shell = gated({ allow: [`127.0.0.1:${listed}`] });
    const env = await run("env | grep -i _proxy= | sort", shell);
    expect(env).toContain("HTTP_PROXY=http://127.0.0.1:3128");
    expect(env).toContain("HTTPS_PROXY=http://127.0.0.1:3128");
    expect(env).toContain("ALL_PROXY=http://127.0.0.1:3128");
    expect(env).toContain("https_proxy=http://127.0.0.1:3128");
    expect(env).toMatch(/^NO_PROXY=$/m);
  });

  it("an unlisted port is refused with a 403 that names it and says how to allow it", async () => {
    const shell = gated({ allow: [`127.0.0.1:${listed}`] });
    const out = await run(curl(`http://127.0.0.1:${unlisted}/`, "-i"), shell);
    expect(out).toContain("403");
    expect(out).toContain(`127.0.0.1:${unlisted} is not in the allow list`);
    expect(out).toContain(`list "127.0.0.1:${unlisted}" in "allow" of sandbox_network`);
    expect(out).not.toContain("hello");
    // CONNECT too (curl reports the proxy's refusal of the tunnel).
    const tunnel = await run(curl(`http://127.0.0.1:${unlisted}/`, "--proxytunnel"), shell);
    expect(tunnel).toMatch(/403/);
    expect(tunnel).not.toContain("hello");
  });

  it("deny wins over allow", async () => {
    const shell = gated({ allow: [`127.0.0.1:${listed}`], deny: ["127.0.0.1"] });
    const out = await run(curl(`http://127.0.0.1:${listed}/`, "-i"), shell);
    expect(out).toContain('denied by "127.0.0.1"');
    expect(out).not.toContain("hello");
  });

  it("a name that resolves to loopback is refused unless listed explicitly", async () => {
    // A wildcard lets any host through on that port, but loopback only when named.
    const wild = gated({ allow: [`*:${listed}`] });
    for (const host of ["localhost", "127.0.0.1", "0x7f.1", "[::ffff:127.0.0.1]"]) {
      const out = await run(curl(`http://${host}:${listed}/`, "-i"), wild);
      expect(out, host).toContain("a loopback or private address");
      expect(out, host).not.toContain("hello");
    }
    const named = gated({ allow: [`localhost:${listed}`] });
    expect(await run(curl(`http://localhost:${listed}/named`), named)).toContain(
      "hello from /named",
    );
  });

  it("direct TCP bypassing the proxy fails: the namespace has a loopback and no route", async () => {
    const shell = gated({ allow: [`127.0.0.1:${listed}`] });
    const direct = await run(curl(`http://127.0.0.1:${listed}/`, "--noproxy '*'"), shell);
    expect(direct).toMatch(/Failed to connect|Couldn't connect/);
    expect(direct).not.toContain("hello");
    const devtcp = await run(`(echo > /dev/tcp/127.0.0.1/${listed}) 2>&1; echo "exit=$?"`, shell);
    expect(devtcp).toMatch(/Connection refused/);
    // No route at all: every address but the namespace's own loopback is unreachable.
    const routes = await run(
      "tail -n +2 /proc/net/route | wc -l; cat /proc/net/if_inet6 | wc -l",
      shell,
    );
    expect(routes.trim().split("\n")[0]).toBe("0");
  });

  it.skipIf(!machinePg)(
    "no Unix socket either: the machine's PostgreSQL socket is refused, warm and per call",
    async () => {
      const shell = gated({ allow: [`127.0.0.1:${listed}`] });
      const psql = "psql -h /var/run/postgresql -U postgres -Atc 'select 4242' </dev/null";
      // The control: outside the sandbox the socket answers (trust auth), so this can fail.
      expect(execFileSync("bash", ["-c", psql], { encoding: "utf8" })).toContain("4242");
      for (const out of [
        await run(`echo ran; ${psql}`, shell),
        await runPerCall(`echo ran; ${psql}`, shell),
      ]) {
        expect(out).toMatch(/^ran\n/);
        expect(out).not.toContain("4242");
        expect(out).toContain("could not create socket: Operation not permitted");
      }
      // Nor the proxy's own socket, bound in for the bridge: only the bridge (outside the filter) uses it.
      const direct = await run(
        `node -e 'require("net").connect("/tmp/.warren-proxy.sock").on("connect",()=>console.log("connected")).on("error",e=>console.log(e.code))'`,
        shell,
      );
      expect(direct).not.toContain("connected");
      expect(direct).toContain("EPERM");
      // The proxy still answers through the bridge in the same sandbox.
      expect(await run(curl(`http://127.0.0.1:${listed}/after`), shell)).toContain(
        "hello from /after",
      );
    },
  );

  it("the proxy's socket lives in a private directory under warren's home", async () => {
    const shell = gated({ allow: [`127.0.0.1:${listed}`] });
    expect(await run(curl(`http://127.0.0.1:${listed}/`), shell)).toContain("hello");
    const runDir = path.join(fx.warrenHome, "run");
    expect(statSync(runDir).mode & 0o777).toBe(0o700);
    const dirs = readdirSync(runDir);
    expect(dirs).toHaveLength(1);
    expect(statSync(path.join(runDir, dirs[0]!)).mode & 0o777).toBe(0o700);
    await closeNetworkProxies();
    expect(existsSync(path.join(runDir, dirs[0]!))).toBe(false);
  });

  it("sandbox_network true reaches the host's loopback directly; false reaches nothing", async () => {
    const open = gated(true);
    expect(await run(curl(`http://127.0.0.1:${unlisted}/open`), open)).toContain("hello");
    const closed = gated(false);
    const out = await run(curl(`http://127.0.0.1:${listed}/`), closed);
    expect(out).not.toContain("hello");
    expect(await run("env | grep -ci _proxy=", closed)).toMatch(/^0/);
  });
});

describe("a profile or agent file only narrows the network", () => {
  const base = { profile: null, caps: null, policy: [], budget: {}, turns: 0, tool_calls: 0 };
  const agent = (fields: Partial<AgentRow>) => ({ ...base, ...fields }) as unknown as AgentRow;

  it("the effective network per agent, from the config, its profile and its parent", () => {
    writeFileSync(
      fx.configFile,
      JSON.stringify({
        sandbox_network: { allow: ["*.example.com"] },
        profiles: {
          wide: { sandbox_network: true },
          narrow: { sandbox_network: { allow: ["api.example.com"] } },
          offline: { sandbox_network: false },
        },
      }),
    );
    const config = loadConfig(process.env);
    const root = agent({});
    const rootNet = capabilitiesOf(config, root).network;
    expect(rootNet).toEqual([{ allow: ["*.example.com"], deny: [] }]);
    // A profile asking for everything gets the parent's gate.
    const wide = childCapabilities(config, root, { profile: config.profiles.wide });
    expect(wide.caps.network).toEqual(rootNet);
    // A narrower gate applies on top: both must let a host through.
    const narrow = childCapabilities(config, root, { profile: config.profiles.narrow });
    const gate = narrow.caps.network as NetworkRules[];
    expect(decideHost(gate, "api.example.com", 443).ok).toBe(true);
    expect(decideHost(gate, "www.example.com", 443).ok).toBe(false);
    // Off is narrower than any gate, and stays off down the tree.
    const offline = childCapabilities(config, root, { profile: config.profiles.offline });
    expect(offline.caps.network).toBe(false);
    const grandchild = childCapabilities(config, agent({ caps: offline.caps }), {
      profile: config.profiles.wide,
    });
    expect(grandchild.caps.network).toBe(false);
    // A root started with a profile gets the config's narrowed by it.
    expect(capabilitiesOf(config, agent({ profile: "offline" })).network).toBe(false);
  });

  it("an agent file's sandbox_network is read, and a bad one is one warning line", () => {
    const agents = path.join(fx.cwd, ".warren", "agents");
    mkdirSync(agents, { recursive: true });
    writeFileSync(
      path.join(agents, "fetcher.md"),
      "---\nname: fetcher\nsandbox_network:\n  allow: [registry.npmjs.org]\n---\nFetch.\n",
    );
    writeFileSync(
      path.join(agents, "broken.md"),
      "---\nname: broken\nsandbox_network: sometimes\n---\nx\n",
    );
    const config = loadConfig(process.env, fx.cwd);
    expect(config.profiles.fetcher?.sandbox_network).toEqual({
      allow: ["registry.npmjs.org"],
      deny: [],
    });
    expect(config.profiles.broken).toBeUndefined();
    expect(config.warnings).toContainEqual(
      expect.stringMatching(/broken\.md:3: sandbox_network must be true, false or/),
    );
  });

  it("a bad profile sandbox_network is a one-line config error naming it", () => {
    writeFileSync(
      fx.configFile,
      JSON.stringify({ profiles: { p: { sandbox_network: { allow: ["http://x.com"] } } } }),
    );
    expect(() => loadConfig(process.env)).toThrow(
      /^profiles\.p\.sandbox_network\.allow: "http:\/\/x\.com" is not a host/,
    );
  });
});

describe("end to end through warren -p", () => {
  it("the root's bash reaches a listed host and gets the gate's 403 for another", async () => {
    const work = path.join(fx.base, "e2e");
    mkdirSync(work);
    const command = [
      curl(`http://127.0.0.1:${listed}/through-warren`),
      curl(`http://127.0.0.1:${unlisted}/not-listed`),
    ].join("; ");
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd: work,
      config: { sandbox: "on", sandbox_network: { allow: [`127.0.0.1:${listed}`] } },
    });
    expect(run.json?.text).toBe("done");
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value as {
      output: string;
    };
    expect(result.output).toContain("hello from /through-warren");
    expect(result.output).toContain(`127.0.0.1:${unlisted} is not in the allow list`);
    // --approve all (the tests' default) answers tool calls, never the gate.
    expect(result.output).toContain("--approve all answers tool calls, not the network gate");
    expect(result.output).not.toContain("hello from /not-listed");
  });

  it("a fork narrows: a gated child's grandchild asking for everything stays gated", async () => {
    const work = path.join(fx.base, "e2e-fork");
    mkdirSync(work);
    const command = [
      curl(`http://127.0.0.1:${listed}/from-grand`),
      curl(`http://127.0.0.1:${unlisted}/widened`),
    ].join("; ");
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [{ name: "fork", arguments: { name: "kid", prompt: "go", profile: "gated" } }],
        },
      },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: ["kid"] } }] },
      },
      { agent: "root", match: after("wait"), reply: { text: "done" } },
      {
        agent: "kid",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "fork", arguments: { name: "grand", prompt: "go", profile: "open" } },
          ],
        },
      },
      {
        agent: "kid",
        match: after("fork"),
        reply: {
          toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: ["grand"] } }],
        },
      },
      { agent: "kid", match: after("wait"), reply: { text: "kid done" } },
      {
        agent: "grand",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command } }] },
      },
      { agent: "grand", match: after("bash"), reply: { text: "grand done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd: work,
      timeout: 90,
      config: {
        sandbox: "on",
        policy: { bash: "allow" },
        profiles: {
          gated: { sandbox_network: { allow: [`127.0.0.1:${listed}`] } },
          open: { sandbox_network: true },
        },
      },
    });
    expect(run.json?.text, run.stderr).toBe("done");
    const result = lastToolResults(requestsOf(e2e.fake(), "grand").at(-1)!)[0]!.value as {
      output: string;
    };
    expect(result.output).toContain("hello from /from-grand");
    expect(result.output).toContain(`127.0.0.1:${unlisted} is not in the allow list`);
    expect(result.output).not.toContain("hello from /widened");
  }, 120_000);

  it("-p without an approver refuses an unlisted host at once, and says so", async () => {
    const work = path.join(fx.base, "e2e-none");
    mkdirSync(work);
    const command = curl(`http://127.0.0.1:${unlisted}/not-asked`);
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd: work,
      env: { WARREN_APPROVE: "" },
      config: {
        sandbox: "on",
        policy: { bash: "allow" },
        sandbox_network: { allow: [`127.0.0.1:${listed}`] },
      },
    });
    expect(run.json?.text).toBe("done");
    const result = lastToolResults(requestsOf(e2e.fake(), "root").at(-1)!)[0]!.value as {
      output: string;
    };
    expect(result.output).toContain("needs a person's approval, and this run answers no");
    expect(result.output).not.toContain("hello");
    const rows = await e2e.db().execute(sql`select 1 from approvals where tool = 'network'`);
    expect(rows.rows).toHaveLength(0);
  });

  it("with a person: an unlisted host is an approval request, allowed for the tree", async () => {
    const work = path.join(fx.base, "e2e-ask");
    mkdirSync(work);
    const first = curl(`http://127.0.0.1:${unlisted}/asked`, "--max-time 50");
    const second = curl(`http://127.0.0.1:${unlisted}/remembered`);
    e2e.fake().script([
      {
        agent: "root",
        match: isFirst,
        reply: { toolCalls: [{ name: "bash", arguments: { command: first } }] },
      },
      {
        agent: "root",
        match: after("bash"),
        reply: { toolCalls: [{ name: "bash", arguments: { command: second } }] },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    const env = warrenEnv({
      databaseUrl: e2e.db().$client.options.connectionString!,
      modelUrl: e2e.fake().baseURL,
      extra: { WARREN_APPROVE: "ask" },
    });
    const configDir = path.join(env.XDG_CONFIG_HOME!, "warren");
    mkdirSync(configDir, { recursive: true });
    writeFileSync(
      path.join(configDir, "config.json"),
      JSON.stringify({
        sandbox: "on",
        policy: { bash: "allow" },
        sandbox_network: { allow: [`127.0.0.1:${listed}`] },
      }),
    );
    const run = startWarren(["-p", "go", "--timeout", "60", "--json"], env, work);
    let id: number | undefined;
    const deadline = Date.now() + 30_000;
    while (id === undefined && Date.now() < deadline) {
      const rows = await e2e
        .db()
        .execute<{ id: number; subject: string; status: string }>(
          sql`select id, subject, status from approvals where tool = 'network'`,
        );
      const row = rows.rows[0];
      if (row) {
        expect(row).toMatchObject({ subject: `127.0.0.1:${unlisted}`, status: "pending" });
        id = Number(row.id);
      } else await new Promise((r) => setTimeout(r, 100));
    }
    expect(id).toBeDefined();
    const answer = await e2e.warren(["approve", String(id), "--tree-wide"]);
    expect(answer.code).toBe(0);
    const done = await run.done;
    expect(done.code).toBe(0);
    const outputs = requestsOf(e2e.fake(), "root")
      .map((r) => lastToolResults(r)[0]?.value as { output?: string } | undefined)
      .map((v) => v?.output ?? "");
    expect(outputs.join("\n")).toContain("hello from /asked");
    // Remembered for the tree: the second request was not asked again.
    expect(outputs.join("\n")).toContain("hello from /remembered");
    const rows = await e2e.db().execute(sql`select 1 from approvals where tool = 'network'`);
    expect(rows.rows).toHaveLength(1);
  });
});
