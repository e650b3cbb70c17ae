// The bridge inside a gated sandbox: its own network namespace has only a loopback, so a small
// node program listens on 127.0.0.1:BRIDGE_PORT there and carries each connection to warren's
// proxy over the Unix socket bound in (proxy.ts). It runs outside the command's seccomp filter
// (which refuses AF_UNIX): per call it is the sandbox's first process and starts the command once
// it listens; in a warm sandbox it is the keeper itself (PID 1), and calls entered beside it use it.
// Run as `node -e BRIDGE_SCRIPT`, so it needs no file of its own in dist.

/** The port the bridge listens on inside the sandbox's own network namespace. */
export const BRIDGE_PORT = 3128;

/** Where the proxy's socket is bound inside the sandbox (the private /tmp holds the mount point). */
export const SANDBOX_PROXY_SOCKET = "/tmp/.warren-proxy.sock";

/**
 * argv: PORT SOCKET [-- COMMAND ARGS…]. Listens, says "ready" on stdout; with a command, runs it
 * (stdio inherited) and exits as it did; without, stays (a warm sandbox's keeper).
 */
export const BRIDGE_SCRIPT = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const args = process.argv.slice(1);
const at = args.indexOf("--");
const [port, socket] = at >= 0 ? args.slice(0, at) : args;
const command = at >= 0 ? args.slice(at + 1) : [];
const server = net.createServer((client) => {
  const upstream = net.connect(socket);
  const done = () => { client.destroy(); upstream.destroy(); };
  client.on("error", done); upstream.on("error", done);
  client.on("close", done); upstream.on("close", done);
  client.pipe(upstream); upstream.pipe(client);
});
server.on("error", (e) => { process.stderr.write("warren bridge: " + e.message + "\\n"); process.exit(125); });
server.listen(Number(port), "127.0.0.1", () => {
  if (command.length === 0) { process.stdout.write("ready\\n"); return; }
  const child = spawn(command[0], command.slice(1), { stdio: "inherit" });
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => child.kill(s));
  child.on("error", (e) => { process.stderr.write(command[0] + ": " + e.message + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 128);
  });
});
`;

/** The program and arguments that start the bridge (and `command`, when given) with `node`. */
export function bridgeArgv(socket: string, command: string[] = []): string[] {
  const argv = [process.execPath, "-e", BRIDGE_SCRIPT, "--", String(BRIDGE_PORT), socket];
  return command.length > 0 ? [...argv, "--", ...command] : argv;
}

/** The variables that send a command's HTTP clients to the bridge. */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${BRIDGE_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: "",
    no_proxy: "",
  };
}
