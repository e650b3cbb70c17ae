// warren's network proxy: the only way out of a sandbox whose network is a gate. An HTTP and
// CONNECT proxy (proxy-chain's Server) listening on a Unix socket in a private directory (0700,
// under warren's home), which the sandbox binds in for its bridge (bridge.ts). Each request is
// decided by the gate's rules (rules.ts): by name, then by every address the name resolves to;
// the connection then goes to the address that was checked (the lookup is pinned, so a second
// DNS answer cannot swap in another). A refusal is a 403 whose body says which host and how to
// allow it.
import dns from "node:dns";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { RequestError, Server } from "proxy-chain";
import { warrenHome } from "../../paths.js";
import {
  decideAddress,
  decideHost,
  normalizeHost,
  type NetworkRules,
  type Verdict,
} from "./rules.js";

type Env = Record<string, string | undefined>;

export interface NetworkProxy {
  /** The Unix socket the proxy listens on (bind it into the sandbox). */
  socketPath: string;
  close(): Promise<void>;
}

/** How names are resolved (tests use their own); default: the system's, every address. */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export interface ProxyOptions {
  /** Where the socket's private directory is made (default: warren's home `run/`). */
  runDir?: string;
  resolve?: Resolve;
  /** Said in a refusal's body: how to allow a target (host:port); default names sandbox_network. */
  hint?: (target: string) => string;
  /** Told of each refusal (the host, why), e.g. to log it. */
  onRefused?: (target: string, reason: string) => void;
  /**
   * Asked about a target (host:port) that no allow list names (never one a deny entry names): a
   * person's approval, which then counts as listing that host:port explicitly (a loopback one
   * too: the person named it). Its signal aborts when the client goes away.
   */
  ask?: (target: string, signal: AbortSignal) => Promise<Verdict>;
}

/** The directory for the proxies' sockets: warren's home `run/`, made 0700. */
export function proxyRunDir(env: Env = process.env): string {
  return path.join(warrenHome(env), "run");
}

/** How to allow `target` (host:port), said after a refusal. */
const DEFAULT_HINT = (target: string) =>
  `to allow it, list "${target}" in "allow" of sandbox_network (the config, or the agent's profile)`;

/** Starts a proxy applying `gate`; its socket is in a new private directory under `runDir`. */
export async function startNetworkProxy(
  gate: NetworkRules[],
  options: ProxyOptions = {},
): Promise<NetworkProxy> {
  const runDir = options.runDir ?? proxyRunDir();
  fs.mkdirSync(runDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(runDir, 0o700);
  sweepStale(runDir);
  // mkdtemp makes it 0700: nobody else can reach (or replace) the socket in it.
  const dir = fs.mkdtempSync(path.join(runDir, `proxy-${process.pid}-`));
  const socketPath = path.join(dir, "proxy.sock");
  const resolve = options.resolve ?? systemResolve;
  const hint = options.hint ?? DEFAULT_HINT;
  const refuse = (target: string, reason: string): never => {
    options.onRefused?.(target, reason);
    throw new RequestError(`warren's network gate: ${reason}; ${hint(target)}\n`, 403);
  };
  const server = new Server({
    // The target as proxy-chain parsed it; never an upstream proxy, never credentials.
    prepareRequestFunction: async ({ hostname, port, request }) => {
      const host = normalizeHost(hostname);
      if (!host)
        throw new RequestError(`warren's network gate: "${hostname}" is not a host\n`, 400);
      const target = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
      const byName = decideHost(gate, host, port);
      // A person's "allow" lists this host:port, for this request, in every rule set.
      let rules = gate;
      if (!byName.ok) {
        if (!byName.askable || !options.ask) return refuse(target, byName.reason);
        const answer = await options.ask(target, closedSignal(request.socket));
        if (!answer.ok) return refuse(target, `${byName.reason}, and ${answer.reason}`);
        rules = gate.map((r) => ({ ...r, allow: [...r.allow, target] }));
      }
      let addresses: { address: string; family: number }[];
      if (net.isIP(host)) addresses = [{ address: host, family: net.isIPv6(host) ? 6 : 4 }];
      else {
        try {
          addresses = await resolve(host);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? "error";
          throw new RequestError(`warren's network gate: cannot resolve ${host} (${code})\n`, 502);
        }
      }
      if (addresses.length === 0) {
        throw new RequestError(`warren's network gate: ${host} has no address\n`, 502);
      }
      // Every address must pass: a name that also resolves to a private address is refused.
      for (const { address } of addresses) {
        const verdict = decideAddress(rules, host, port, address);
        if (!verdict.ok) return refuse(target, verdict.reason);
      }
      return { dnsLookup: pinnedLookup(addresses) };
    },
  });
  // proxy-chain drops a connection without a remote address (its onConnection, for a Node bug
  // with TCP sockets closed early); one over a Unix socket never has one: name it, first.
  server.server.prependListener("connection", (socket: net.Socket) => {
    Object.defineProperty(socket, "remoteAddress", { value: "sandbox", configurable: true });
  });
  // proxy-chain's listen() takes a port; a Unix socket is its http.Server's own listen.
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.server.listen(socketPath, () => {
      server.server.off("error", reject);
      resolve();
    });
  });
  fs.chmodSync(socketPath, 0o600);
  // Waiting for sandboxes must not keep warren's process alive (a request in flight does).
  server.server.unref();
  // Gone with the process (a crash leaves it to the next start's sweep).
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeDir);
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    close: () =>
      (closed ??= server.close(true).finally(() => {
        process.off("exit", removeDir);
        removeDir();
      })),
  };
}

/** Aborted when the client's connection closes (it gave up: stop asking for it). */
function closedSignal(socket: net.Socket): AbortSignal {
  const controller = new AbortController();
  if (socket.destroyed) controller.abort();
  else socket.once("close", () => controller.abort());
  return controller.signal;
}

/** A dns.lookup that answers only with the addresses already checked. */
function pinnedLookup(addresses: { address: string; family: number }[]): typeof dns.lookup {
  const lookup = (
    _host: string,
    options: dns.LookupOptions | number | ((...args: unknown[]) => void),
    callback?: (...args: unknown[]) => void,
  ) => {
    const cb = (typeof options === "function" ? options : callback)!;
    const opts = typeof options === "object" ? options : {};
    const family = typeof options === "number" ? options : (opts.family ?? 0);
    const fitting = addresses.filter((a) => !family || family === 0 || a.family === family);
    const list = fitting.length > 0 ? fitting : addresses;
    process.nextTick(() => {
      if (opts.all) cb(null, list);
      else cb(null, list[0]!.address, list[0]!.family);
    });
  };
  return lookup as unknown as typeof dns.lookup;
}

/** Removes proxy directories left by processes that are gone (a crash leaves its socket). */
function sweepStale(runDir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(runDir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^proxy-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    fs.rmSync(path.join(runDir, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The token that names a proxy's policy in a key (same gate, same proxy). */
export function gateKey(gate: NetworkRules[]): string {
  return JSON.stringify(gate);
}
