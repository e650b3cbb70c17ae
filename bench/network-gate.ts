// What the network gate adds to an HTTP request: a node client inside a gated sandbox asks a
// loopback HTTP server through the bridge and warren's proxy (a new connection each time, as
// curl does), and the same client in a sandbox with the host's network asks it directly. Both
// clients run in batches, alternating, so load drift hits both alike. Needs no database.
import { spawn } from "node:child_process";
import http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { shellLaunch, probeBwrap } from "../src/sandbox/launch.js";
import { BRIDGE_PORT } from "../src/sandbox/network/bridge.js";
import { closeNetworkProxies } from "../src/sandbox/network/gate.js";
import { EMPTY_SHELL_ENV } from "../src/sandbox/env.js";
import { DEFAULT_SANDBOX, type ShellSettings } from "../src/sandbox/settings.js";
import type { NetworkPolicy } from "../src/sandbox/network/rules.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { percentile } from "./stats.js";

const ROUNDS = 8;
const PER_ROUND = 50;

/**
 * Argv: MODE COUNT URL [PROXY_PORT]; MODE direct (a GET), http (a GET through the proxy) or
 * connect (a CONNECT tunnel through the proxy, then a GET in it: what HTTPS clients do). Prints
 * each request's milliseconds, one JSON array.
 */
const CLIENT = `
const http = require("node:http");
const net = require("node:net");
const [mode, count, url, proxyPort] = process.argv.slice(1);
const target = new URL(url);
const since = (started) => Number(process.hrtime.bigint() - started) / 1e6;
const get = (options) => new Promise((resolve, reject) => {
  const started = process.hrtime.bigint();
  http.get({ ...options, agent: false }, (res) => {
    res.resume();
    res.on("end", () => res.statusCode === 200 ? resolve(since(started)) : reject(new Error("status " + res.statusCode)));
  }).on("error", reject);
});
const tunnel = () => new Promise((resolve, reject) => {
  const started = process.hrtime.bigint();
  const socket = net.connect(Number(proxyPort), "127.0.0.1", () => {
    socket.write("CONNECT " + target.host + " HTTP/1.1\\r\\nHost: " + target.host + "\\r\\n\\r\\n");
  });
  socket.setNoDelay(true);
  let text = "";
  let open = false;
  socket.on("data", (chunk) => {
    text += chunk;
    if (!open && text.includes("\\r\\n\\r\\n")) {
      if (!text.startsWith("HTTP/1.1 200")) return reject(new Error(text.split("\\r\\n")[0]));
      open = true;
      text = "";
      socket.write("GET / HTTP/1.1\\r\\nHost: " + target.host + "\\r\\nConnection: close\\r\\n\\r\\n");
    }
  });
  socket.on("end", () => (open && text.startsWith("HTTP/1.1 200") ? resolve(since(started)) : reject(new Error("tunnel: " + text.slice(0, 80)))));
  socket.on("error", reject);
});
const once = () => mode === "connect" ? tunnel()
  : mode === "http" ? get({ host: "127.0.0.1", port: Number(proxyPort), path: url, headers: { host: target.host } })
  : get({ host: target.hostname, port: Number(target.port), path: target.pathname });
(async () => {
  const times = [];
  for (let i = 0; i < Number(count); i++) times.push(await once());
  process.stdout.write(JSON.stringify(times));
})().catch((e) => { process.stderr.write(String(e)); process.exit(1); });
`;

async function batch(settings: ShellSettings, cwd: string, args: string[]): Promise<number[]> {
  const launch = await shellLaunch(settings, cwd, [process.execPath, "-e", CLIENT, "--", ...args]);
  if (!launch.ok) throw new Error(launch.message);
  return new Promise((resolve, reject) => {
    const child = spawn(launch.file, launch.args, {
      cwd,
      env: launch.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(JSON.parse(out) as number[]);
      else reject(new Error(`client failed (${code}): ${err.trim().slice(0, 300)}`));
    });
  });
}

export async function networkGate(context: BenchContext): Promise<BenchRow[]> {
  const { signal, log } = context;
  const probe = await probeBwrap("bwrap");
  if (!probe.ok) {
    log(`network-gate: skipped, ${probe.reason}`);
    return [];
  }
  const server = http.createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  const cwd = await mkdtemp(path.join(os.tmpdir(), "warren-bench-net-"));
  const settings = (network: NetworkPolicy): ShellSettings => ({
    sandbox: { ...DEFAULT_SANDBOX, mode: "on", network },
    env: EMPTY_SHELL_ENV,
  });
  const direct = settings(true);
  const gated = settings([{ allow: [`127.0.0.1:${port}`], deny: [] }]);
  const bridge = String(BRIDGE_PORT);
  const tunneled: number[] = [];
  const forwarded: number[] = [];
  const plain: number[] = [];
  try {
    // Warm-up (and a check that each mode works before anything is measured).
    await batch(gated, cwd, ["connect", "10", url, bridge]);
    await batch(gated, cwd, ["http", "10", url, bridge]);
    await batch(direct, cwd, ["direct", "10", url]);
    for (let i = 0; i < ROUNDS && !signal.aborted; i++) {
      const n = String(PER_ROUND);
      tunneled.push(...(await batch(gated, cwd, ["connect", n, url, bridge])));
      forwarded.push(...(await batch(gated, cwd, ["http", n, url, bridge])));
      plain.push(...(await batch(direct, cwd, ["direct", n, url])));
    }
  } finally {
    server.close();
    await closeNetworkProxies();
    await rm(cwd, { recursive: true, force: true });
  }
  const p50 = (xs: number[]) => percentile(xs, 50);
  log(
    `network-gate: p50 through the gate ${p50(tunneled).toFixed(2)} ms (CONNECT), ${p50(forwarded).toFixed(2)} ms (plain HTTP), direct ${p50(plain).toFixed(2)} ms (${plain.length} requests each)`,
  );
  return [
    row(
      "loopback HTTP request p50, CONNECT through the gate",
      p50(tunneled),
      "ms",
      "direct",
      p50(plain),
    ),
    row(
      "loopback HTTP request p50, plain HTTP through the gate",
      p50(forwarded),
      "ms",
      "direct",
      p50(plain),
    ),
    row(
      "HTTP request p50 added by the gate (CONNECT)",
      p50(tunneled) - p50(plain),
      "ms",
      "goal",
      5,
    ),
    row(
      "HTTP request p50 added by the gate (plain HTTP)",
      p50(forwarded) - p50(plain),
      "ms",
      "goal",
      5,
    ),
  ];
}
