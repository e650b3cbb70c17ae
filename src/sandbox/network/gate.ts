// What a sandbox whose network is a gate adds to its launch (launch.ts per call, warm.ts for the
// pool): its own network namespace, warren's proxy for the gate (one per gate per process, started
// on first use) with its socket bound in, the bridge as the first process (or the warm keeper),
// and the proxy variables in the command's environment.
import { bridgeArgv, proxyEnv, SANDBOX_PROXY_SOCKET } from "./bridge.js";
import { proxyRunDir, startNetworkProxy, type NetworkProxy } from "./proxy.js";
import { gateOf, type NetworkPolicy, type Verdict } from "./rules.js";

type Env = Record<string, string | undefined>;

export interface Gate {
  /** bwrap arguments, placed after every other mount: the proxy's socket bound into /tmp. */
  binds: string[];
  /** Added to the command's environment: HTTP(S)_PROXY and the like, to the bridge. */
  env: Record<string, string>;
  /** The sandbox's first process for a per-call launch: the bridge, which then runs `command`. */
  wrap(command: string[]): string[];
  /** A warm sandbox's keeper: the bridge alone (it prints "ready" once it listens). */
  keeper: string[];
}

/**
 * Who asks a person about a host no allow list names: one per agent (`key`, its id), so the
 * question names the agent and its tree. Without one, such a host is refused at once.
 */
export interface NetworkAsker {
  key: string;
  ask(target: string, signal: AbortSignal): Promise<Verdict>;
}

const proxies = new Map<string, Promise<NetworkProxy>>();

/**
 * The gate for `policy`, its proxy started (or reused); undefined when the network is not a gate
 * (true: the host's; false: none at all). `env`: whose warren home holds the proxy's socket;
 * `asker`: who asks a person about an unlisted host (none: refused).
 */
export async function gateFor(
  policy: NetworkPolicy,
  env: Env = process.env,
  asker?: NetworkAsker,
): Promise<Gate | undefined> {
  const rules = gateOf(policy);
  if (!rules) return undefined;
  const runDir = proxyRunDir(env);
  // A proxy per gate, and per agent when it may ask (the question is that agent's).
  const key = JSON.stringify([runDir, rules, asker?.key ?? null]);
  let proxy = proxies.get(key);
  if (!proxy) {
    proxy = startNetworkProxy(rules, { runDir, ...(asker && { ask: asker.ask }) });
    proxies.set(key, proxy);
    proxy.catch(() => proxies.delete(key));
  }
  const { socketPath } = await proxy;
  return {
    binds: ["--bind", socketPath, SANDBOX_PROXY_SOCKET],
    env: proxyEnv(),
    wrap: (command) => bridgeArgv(SANDBOX_PROXY_SOCKET, command),
    keeper: bridgeArgv(SANDBOX_PROXY_SOCKET),
  };
}

/** Stops every proxy this process started (tests; a process that wants none left). */
export async function closeNetworkProxies(): Promise<void> {
  const all = [...proxies.values()];
  proxies.clear();
  await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
}
