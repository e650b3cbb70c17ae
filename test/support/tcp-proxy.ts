// A small TCP proxy in front of the test database, for fault injection without restarting a
// Postgres that other tests share: forward, cut every connection, refuse new ones for a while,
// or stop forwarding while keeping sockets open (a half-open connection).
import net from "node:net";

/** What the proxy does with a new connection: forward it, swallow it silently, or refuse it. */
export type NewConnections = "forward" | "silent" | "refuse";

export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** Destroys every open connection (both sides). */
  cutAll(): void;
  /** Cuts everything and refuses new connections for `ms` (as a restarting server does). */
  outage(ms: number): Promise<void>;
  /**
   * Every open connection goes silent for good (bytes are swallowed both ways, sockets stay
   * open): half-open connections. New connections work normally.
   */
  halfOpenAll(): void;
  /** From now on, new connections are forwarded (the default), accepted but silent, or refused. */
  setNewConnections(mode: NewConnections): void;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; server: net.Socket; silent: boolean }>();
  let refusing = false;
  let mode: NewConnections = "forward";
  let count = 0;

  const connect = (client: net.Socket) => {
    const server = net.connect(targetPort, targetHost);
    const pair = { client, server, silent: mode === "silent" };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on("error", end).on("close", end);
    server.on("error", end).on("close", end);
    client.on("data", (chunk) => {
      if (!pair.silent) server.write(chunk);
    });
    server.on("data", (chunk) => {
      if (!pair.silent) client.write(chunk);
    });
  };

  const proxy = net.createServer((client) => {
    count++;
    if (refusing || mode === "refuse") {
      client.destroy();
      return;
    }
    connect(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as net.AddressInfo).port;

  const cutAll = () => {
    for (const { client, server } of [...pairs]) {
      client.destroy();
      server.destroy();
    }
    pairs.clear();
  };

  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    cutAll,
    async outage(ms) {
      refusing = true;
      cutAll();
      await new Promise((resolve) => setTimeout(resolve, ms));
      refusing = false;
    },
    halfOpenAll() {
      for (const pair of pairs) pair.silent = true;
    },
    setNewConnections(next) {
      mode = next;
    },
    accepted: () => count,
    async close() {
      refusing = true;
      cutAll();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
