// A PostgreSQL-wire-protocol-aware TCP proxy for fault injection: it reads both directions'
// messages, so it can cut a connection at the one moment that matters for exactly-once — after the
// server committed a write, before the client hears so (a lost reply) — and it can also go silent
// (a network partition that later heals) or cut everything.
import net from "node:net";

// --- the wire format ---------------------------------------------------------------------------

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

export interface PgMessage {
  /** The one-byte type, e.g. "C" (CommandComplete), "Z" (ReadyForQuery). */
  type: string;
  /** The body after the 4-byte length. */
  body: Buffer;
  /** The whole message as it came over the wire. */
  raw: Buffer;
}

/** Cuts a byte stream of typed messages (1-byte type, 4-byte length) into whole messages. */
export class PgMessageReader {
  private pending: Buffer = Buffer.alloc(0);

  /** Adds a chunk and returns every message it completed; a partial one waits for more bytes. */
  push(chunk: Buffer): PgMessage[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: PgMessage[] = [];
    let at = 0;
    while (this.pending.length - at >= 5) {
      const length = this.pending.readInt32BE(at + 1);
      if (length < 4) throw new Error(`malformed message length ${length}`);
      if (this.pending.length - at < 1 + length) break;
      const raw = this.pending.subarray(at, at + 1 + length);
      out.push({ type: String.fromCharCode(raw[0]!), body: raw.subarray(5), raw });
      at += 1 + length;
    }
    this.pending = this.pending.subarray(at);
    return out;
  }
}

/** The NUL-terminated string at `offset` of `body`, and the offset after it. */
function cString(body: Buffer, offset = 0): [string, number] {
  const end = body.indexOf(0, offset);
  const stop = end < 0 ? body.length : end;
  return [body.toString("utf8", offset, stop), stop + 1];
}

/**
 * What the functions of warren's migrations that clients call write: the proxy sees only the
 * call, so it counts the call as a write and a statement filter (`/insert into "?events"?/`)
 * matches it as it matched the statements the function took over. test/db/pg-proxy.test.ts fails
 * when a migration adds a function that is not listed here or in FUNCTION_READS.
 */
export const FUNCTION_WRITES: Record<string, string> = {
  warren_fork_batch: "insert into agents; insert into events; update agents set tool_calls",
  warren_turn_end: "update agents set state = 'idle'",
  // Called by the statement that records an answer, which is known by its own text.
  warren_answered: "update agents set input_tokens; update agents set state = 'idle'",
  // A feed registering or closing (watchers.ts); either may turn the hint triggers on or off.
  warren_feed_watch: "insert into feed_watchers; alter table agents enable trigger",
  warren_feed_unwatch: "delete from feed_watchers; alter table agents disable trigger",
  // A scheduler's sweep for triggers a crashed feed left on (watchers.ts expireHints).
  warren_feed_expire: "alter table agents disable trigger",
  // The model cap (runtime/model-cap.ts): a slot taken or queued, given back, a server paused.
  warren_model_acquire: "insert into model_slots; update model_slots set granted",
  warren_model_release: "delete from model_slots; update model_slots set granted",
  warren_model_pause: "update model_servers set paused_until",
};

/** The functions of warren's migrations that clients call and that only read (not writes). */
export const FUNCTION_READS: readonly string[] = ["warren_recent_events"];

/** The functions of warren's migrations that only other functions call. */
export const FUNCTION_INTERNAL: readonly string[] = ["warren_feed_sync", "warren_model_promote"];

/** The function a statement is a call of (`select [… from] warren_x(…)`); a statement that calls
 *  one among its own writes (the answer's warren_answered) is known by its own text. */
function calledFunction(text: string): string | undefined {
  return /^\s*select\s+(?:[\w\s,*:.]*?\bfrom\s+)?(warren_\w+)\s*\(/i.exec(text)?.[1];
}

/**
 * Whether a statement's text writes rows (a data-modifying CTE under a SELECT tag included, and
 * a call of a function in FUNCTION_WRITES).
 */
export function isWriteSql(text: string): boolean {
  const called = calledFunction(text);
  if (called !== undefined && called in FUNCTION_WRITES) return true;
  return /\binsert\s+into\b|\bupdate\s+("?[\w.]+"?)\s+(\w+\s+)?set\b|\bdelete\s+from\b/i.test(text);
}

/** The text a committed write is known by: a function's call by what the function writes. */
function writeText(text: string): string {
  const called = calledFunction(text);
  const writes = called === undefined ? undefined : FUNCTION_WRITES[called];
  return writes === undefined ? text : `${called}(…): ${writes}`;
}

/** A statement that makes its transaction's commit wait for the WAL flush in a relaxed session. */
const DURABLE_SQL = /set_config\('synchronous_commit', 'on'|synchronous_commit\s*=\s*on/i;

const WRITE_TAG = /^(INSERT|UPDATE|DELETE|MERGE|COMMIT)\b/;

/**
 * Follows one connection's conversation and says when the server has just committed a write:
 * a ReadyForQuery with status 'I' (no transaction open) ending a transaction — implicit or
 * explicit — that wrote and did not fail. The client has not seen that ReadyForQuery nor the
 * CommandComplete before it when the proxy holds them back from the first write's completion.
 */
class CommitTracker {
  /** The SQL of the statement now executing (node-postgres never pipelines). */
  private current = "";
  /** `traffic` gives the proxy's current counters (they are replaced on a reset). */
  constructor(private readonly traffic: () => Traffic) {}
  private statements = new Map<string, string>();
  private wrote = false;
  /** The transaction asked for a durable commit (DURABLE_COMMIT or `set … synchronous_commit = on`). */
  private durable = false;
  private failed = false;
  /** The writes of the transaction in progress (at a commit: the writes it commits). */
  writes: string[] = [];

  fromClient(message: PgMessage): void {
    if (message.type === "Q" || message.type === "S") this.traffic().asked();
    if (message.type === "Q" || message.type === "E") {
      if (message.type === "Q") this.current = cString(message.body)[0];
      this.traffic().statement(this.current);
      if (DURABLE_SQL.test(this.current)) this.durable = true;
    } else if (message.type === "P") {
      const [name, next] = cString(message.body);
      const [text] = cString(message.body, next);
      this.statements.set(name, text);
      if (name === "") this.current = text;
    } else if (message.type === "B") {
      const [, next] = cString(message.body);
      const [statement] = cString(message.body, next);
      this.current = this.statements.get(statement) ?? this.current;
    }
  }

  /**
   * Called for every server message: "hold" from a write's completion (outside a transaction
   * block, or the COMMIT of one that wrote) to its ReadyForQuery, "commit" at a ReadyForQuery
   * that ends a committed write, "pass" otherwise (which releases anything held).
   */
  fromServer(message: PgMessage): "hold" | "commit" | "pass" {
    switch (message.type) {
      case "C": {
        const tag = cString(message.body)[0];
        // ROLLBACK, also the tag of a COMMIT of a failed transaction: nothing was committed.
        if (tag.startsWith("ROLLBACK")) this.wrote = false;
        const write = WRITE_TAG.test(tag) && !tag.startsWith("COMMIT");
        if (write || (tag.startsWith("SELECT") && isWriteSql(this.current))) {
          this.wrote = true;
          this.writes.push(writeText(this.current));
        }
        return this.wrote && !this.failed ? "hold" : "pass";
      }
      case "E":
        this.failed = true;
        return "pass";
      case "Z": {
        this.traffic().roundTrips++;
        this.traffic().answered();
        const status = String.fromCharCode(message.body[0] ?? 0);
        // Inside a transaction block the client must hear each reply to send COMMIT at all.
        if (status === "T") return "pass";
        const committed = status === "I" && this.wrote && !this.failed;
        if (committed && this.durable) this.traffic().durableCommits++;
        this.durable = false;
        this.wrote = false;
        this.failed = false;
        if (!committed) this.writes = [];
        return committed ? "commit" : "pass";
      }
      default:
        return "pass";
    }
  }
}

/** What went over the proxy's connections: statements, round trips, and each statement's count. */
export class Traffic {
  statements = 0;
  /** Committed transactions that wrote. */
  commits = 0;
  /** Of those, the ones that asked for a durable commit (in a session with relaxed commits). */
  durableCommits = 0;
  /** ReadyForQuery messages: one per simple query or per extended-protocol Sync. */
  roundTrips = 0;
  /** Statement text (whitespace folded) → times executed. */
  readonly byStatement = new Map<string, number>();
  /** Queries (or Syncs) sent and not yet answered, and the most there were at once: above 1,
   *  a client sent one without waiting for the answer to the one before (pipelining). */
  unanswered = 0;
  mostUnanswered = 0;

  asked(): void {
    this.unanswered++;
    this.mostUnanswered = Math.max(this.mostUnanswered, this.unanswered);
  }

  answered(): void {
    this.unanswered = Math.max(0, this.unanswered - 1);
  }

  statement(text: string): void {
    this.statements++;
    const key = text.replace(/\s+/g, " ").trim();
    this.byStatement.set(key, (this.byStatement.get(key) ?? 0) + 1);
  }
}

// --- the proxy ---------------------------------------------------------------------------------

/** Which committed writes lose their reply. */
export interface DropPolicy {
  /** Each commit's chance of being dropped (0..1). */
  probability?: number;
  /** Drop every Nth commit (counted from when the policy was set, after the filter). Without
   *  `every` and `probability`, every commit is dropped. */
  every?: number;
  /** Leave the first N commits alone. Default 0. */
  skip?: number;
  /** Stop after this many drops. Default unlimited. */
  max?: number;
  /** Only commits of a transaction with a write statement that matches. */
  statement?: RegExp;
  /** Seed of the random source (default 1), so a failing run can be replayed. */
  seed?: number;
  /**
   * "cut" (default): destroy both sockets instead of forwarding the reply. "silence": keep the
   * reply and make the whole proxy silent (see silence()) from that moment, until resume().
   */
  action?: "cut" | "silence";
}

export interface DroppedCommit {
  /** The write statements of the committed transaction, each shortened. */
  statements: string[];
  at: number;
}

export interface PgProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** From now on, cut the connection (or go silent) instead of forwarding the reply of these
   *  committed writes. */
  dropCommits(policy: DropPolicy): void;
  /** Forward every reply again. */
  stopDropping(): void;
  /** Committed writes whose reply was dropped so far. */
  dropped(): DroppedCommit[];
  /** Committed writes seen so far (dropped or not). */
  commits(): number;
  /**
   * Nothing is forwarded either way, sockets stay open, new connections are accepted and silent:
   * a network partition. Bytes are kept and delivered on resume(), as TCP would.
   */
  silence(): void;
  /** Ends a silence: delivers what was kept, and the closes that happened meanwhile. */
  resume(): void;
  /** Destroys every open connection (both sides). */
  cut(): void;
  /** Statements and round trips since the last resetTraffic() (or the start). */
  traffic(): Traffic;
  resetTraffic(): void;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  server: net.Socket;
  /** Bytes held back while the proxy is silent, per direction, and a close seen meanwhile. */
  toServer: Buffer[];
  toClient: Buffer[];
  closedWhileSilent: boolean;
}

/** A small seeded random source (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startPgProxy(targetHost: string, targetPort: number): Promise<PgProxy> {
  const pairs = new Set<Pair>();
  const drops: DroppedCommit[] = [];
  let policy: DropPolicy | undefined;
  let random = seeded(1);
  let seenSincePolicy = 0;
  let dropsSincePolicy = 0;
  let commitCount = 0;
  let silent = false;
  let closing = false;
  let count = 0;
  let traffic = new Traffic();

  const destroy = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.server.destroy();
  };

  const shouldDrop = (writes: string[]): boolean => {
    commitCount++;
    traffic.commits++;
    if (!policy) return false;
    const filter = policy.statement;
    if (filter && !writes.some((w) => filter.test(w))) return false;
    seenSincePolicy++;
    if (seenSincePolicy <= (policy.skip ?? 0)) return false;
    if (policy.max !== undefined && dropsSincePolicy >= policy.max) return false;
    // Neither `every` nor `probability`: every matching commit.
    const every = policy.every ?? (policy.probability === undefined ? 1 : undefined);
    const byCount = every !== undefined && seenSincePolicy % every === 0;
    const byChance = policy.probability !== undefined && random() < policy.probability;
    if (!byCount && !byChance) return false;
    dropsSincePolicy++;
    const statements = writes.map((w) => w.replace(/\s+/g, " ").trim().slice(0, 120));
    drops.push({ statements, at: Date.now() });
    return true;
  };

  const connect = (client: net.Socket) => {
    const server = net.connect(targetPort, targetHost);
    const pair: Pair = { client, server, toServer: [], toClient: [], closedWhileSilent: false };
    pairs.add(pair);
    const end = () => {
      if (silent && pairs.has(pair)) {
        pair.closedWhileSilent = true;
        return;
      }
      destroy(pair);
    };
    client.on("error", end).on("close", end);
    server.on("error", end).on("close", end);
    client.setNoDelay(true);
    server.setNoDelay(true);

    const tracker = new CommitTracker(() => traffic);
    const toServer = (bytes: Buffer) => {
      if (silent) pair.toServer.push(bytes);
      else server.write(bytes);
    };
    const toClient = (bytes: Buffer) => {
      if (silent) pair.toClient.push(bytes);
      else client.write(bytes);
    };

    // Client → server: the untyped startup phase (an SSL or GSS request is refused here, as a
    // server without SSL would answer), then typed messages, read only to know each statement.
    let startup = true;
    let startupBuffer: Buffer = Buffer.alloc(0);
    const clientReader = new PgMessageReader();
    const fromClient = (chunk: Buffer) => {
      if (!startup) {
        for (const message of clientReader.push(chunk)) tracker.fromClient(message);
        return toServer(chunk);
      }
      startupBuffer = Buffer.concat([startupBuffer, chunk]);
      while (startup && startupBuffer.length >= 8) {
        const length = startupBuffer.readInt32BE(0);
        if (startupBuffer.length < length) return;
        const code = startupBuffer.readInt32BE(4);
        const packet = startupBuffer.subarray(0, length);
        startupBuffer = startupBuffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          client.write("N");
          continue;
        }
        startup = false;
        toServer(packet);
        if (startupBuffer.length) fromClient(startupBuffer);
      }
    };

    // Server → client: from a write's CommandComplete up to its ReadyForQuery the bytes are held;
    // a commit chosen by the policy is then dropped together with both sockets.
    const serverReader = new PgMessageReader();
    let held: Buffer[] = [];
    const fromServer = (chunk: Buffer) => {
      for (const message of serverReader.push(chunk)) {
        const verdict = tracker.fromServer(message);
        if (verdict === "commit" && shouldDrop(tracker.writes)) {
          if (policy?.action !== "silence") return destroy(pair);
          silent = true;
        }
        if (verdict === "commit") tracker.writes = [];
        if (verdict === "hold") held.push(message.raw);
        else if (held.length) {
          held.push(message.raw);
          toClient(Buffer.concat(held));
          held = [];
        } else toClient(message.raw);
      }
    };

    client.on("data", (chunk: Buffer) => fromClient(chunk));
    server.on("data", (chunk: Buffer) => fromServer(chunk));
  };

  const proxy = net.createServer((client) => {
    count++;
    if (closing) return void client.destroy();
    connect(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as net.AddressInfo).port;

  const cut = () => {
    for (const pair of [...pairs]) destroy(pair);
  };

  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    dropCommits(next) {
      policy = next;
      random = seeded(next.seed ?? 1);
      seenSincePolicy = 0;
      dropsSincePolicy = 0;
    },
    stopDropping() {
      policy = undefined;
    },
    dropped: () => [...drops],
    commits: () => commitCount,
    silence() {
      silent = true;
    },
    resume() {
      silent = false;
      for (const pair of [...pairs]) {
        for (const bytes of pair.toServer.splice(0)) pair.server.write(bytes);
        for (const bytes of pair.toClient.splice(0)) pair.client.write(bytes);
        if (pair.closedWhileSilent) {
          pairs.delete(pair);
          pair.client.end();
          pair.server.end();
        }
      }
    },
    cut,
    traffic: () => traffic,
    resetTraffic() {
      traffic = new Traffic();
    },
    accepted: () => count,
    open: () => pairs.size,
    async close() {
      closing = true;
      silent = false;
      cut();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
