// Shared by the end-to-end tests of `bin/warren -p`: a fresh fake model per test, the run itself,
// and small readers for what the model was sent and what the database holds afterwards.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { asc, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { agents, type AgentRow } from "../../src/agents/agents.sql.js";
import { events, type EventRow } from "../../src/agents/events.sql.js";
import type { Db } from "../../src/db/client.js";
import { INHERITED_HEAD } from "../../src/llm/framing.js";
import { mail, type MailRow } from "../../src/mail/mail.sql.js";
import { useTestDatabase } from "../support/db.js";
import { startPgbouncer, type Pgbouncer } from "../support/pgbouncer.js";
import {
  agentNameOf,
  identityOf,
  startFakeModel,
  type FakeModel,
  type FakeModelOptions,
  type RecordedMessage,
  type RecordedRequest,
} from "../support/fake-model.js";
import { runWarren, warrenEnv, type WarrenRun } from "../support/warren.js";

/** What `warren -p --json` prints. */
export interface PromptJson {
  tree_id: string;
  agent_id: string;
  text: string;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  error?: string;
}

export interface PromptOptions {
  /** `--timeout` seconds: a safety net so a broken runtime fails the test instead of hanging it. */
  timeout?: number;
  json?: boolean;
  env?: Record<string, string>;
  /** Written to $XDG_CONFIG_HOME/warren/config.json. */
  config?: object;
  /** Talk to this model URL instead of the fake's (e.g. an AbortProbe in front of it). */
  modelUrl?: string;
  /** The root's working directory (default: the test's). */
  cwd?: string;
}

export interface E2E {
  db(): Db;
  /** The fake model of the current test (a fresh one per test, so scripts never leak). */
  fake(): FakeModel;
  /** Runs `warren -p PROMPT --json --timeout N`; `json` is the parsed output when it parses. */
  prompt(text: string, options?: PromptOptions): Promise<WarrenRun & { json?: PromptJson }>;
  /** Runs any other warren command against the same database (`env`: more variables). */
  warren(args: string[], env?: Record<string, string>, cwd?: string): Promise<WarrenRun>;
}

/**
 * WARREN_TEST_POOLER=off|direct runs every `warren` of these tests through a real PgBouncer in
 * transaction mode (WARREN_POOLER=transaction), with LISTEN off or LISTEN straight to Postgres
 * (WARREN_LISTEN_URL); the tests' own reads and writes still go to Postgres directly.
 */
function poolerUnderTest(): "off" | "direct" | undefined {
  const mode = process.env.WARREN_TEST_POOLER;
  if (!mode) return undefined;
  if (mode === "off" || mode === "direct") return mode;
  throw new Error(`WARREN_TEST_POOLER must be "off" or "direct", got "${mode}"`);
}

const LISTEN_OFF_LINE =
  "warren: notifications unavailable (LISTEN is off); waits and claims re-check every 1 s\n";

/**
 * A run with LISTEN off (WARREN_TEST_POOLER=off) says so in one line on stderr; a `-p` run must
 * (`required`). That line is taken out so the tests see the rest as they would without a pooler.
 */
function withoutListenOffLine(
  run: WarrenRun,
  env: NodeJS.ProcessEnv,
  required: boolean,
): WarrenRun {
  if (poolerUnderTest() !== "off" || env.WARREN_LISTEN_URL !== "off") return run;
  if (!run.stderr.includes(LISTEN_OFF_LINE)) {
    if (required && run.code === 0) {
      throw new Error(`LISTEN off, but -p did not say so on stderr: ${JSON.stringify(run.stderr)}`);
    }
    return run;
  }
  return { ...run, stderr: run.stderr.replace(LISTEN_OFF_LINE, "") };
}

/** `fakeOptions`: how each test's fake model server behaves (e.g. measured usage). */
export function useE2E(fakeOptions: FakeModelOptions = {}): E2E {
  const database = useTestDatabase();
  const pooler = poolerUnderTest();
  let bouncer: Pgbouncer | undefined;
  if (pooler) {
    beforeAll(async () => {
      bouncer = await startPgbouncer(database().url);
    });
    afterAll(async () => {
      await bouncer?.stop();
    });
  }
  let fake: FakeModel | undefined;
  beforeEach(async () => {
    fake = await startFakeModel(fakeOptions);
  });
  afterEach(async () => {
    const current = fake;
    fake = undefined;
    try {
      current?.assertAllUsed();
    } finally {
      await current?.close();
    }
  });
  const theFake = () => {
    if (!fake) throw new Error("the fake model exists only inside a test");
    return fake;
  };
  const env = (extra: Record<string, string> = {}, modelUrl = theFake().baseURL) => {
    if (!pooler || !bouncer) return warrenEnv({ databaseUrl: database().url, modelUrl, extra });
    const direct = database().url;
    return warrenEnv({
      databaseUrl: bouncer.urlFor(direct),
      modelUrl,
      extra: {
        WARREN_POOLER: "transaction",
        WARREN_LISTEN_URL: pooler === "off" ? "off" : direct,
        ...extra,
      },
    });
  };

  return {
    db: () => database().db,
    fake: theFake,
    async prompt(text, options = {}) {
      const runEnv = env(options.env, options.modelUrl);
      if (options.config) {
        const dir = path.join(runEnv.XDG_CONFIG_HOME!, "warren");
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, "config.json"), JSON.stringify(options.config));
      }
      const args = ["-p", text, "--timeout", String(options.timeout ?? 60)];
      if (options.json !== false) args.push("--json");
      const run = withoutListenOffLine(await runWarren(args, runEnv, options.cwd), runEnv, true);
      return { ...run, json: parseJson(run.stdout) };
    },
    warren: async (args, extra, cwd) => {
      const runEnv = env(extra);
      return withoutListenOffLine(await runWarren(args, runEnv, cwd), runEnv, false);
    },
  };
}

function parseJson(stdout: string): PromptJson | undefined {
  try {
    return JSON.parse(stdout) as PromptJson;
  } catch {
    return undefined;
  }
}

// --- a probe between warren and the fake model ---------------------------------------------

export interface AbortProbe {
  baseURL: string;
  /** Agent names whose model call warren abandoned (closed) before the answer was complete. */
  aborted: string[];
  close(): Promise<void>;
}

/** A pass-through HTTP proxy that notices which agents' model calls the client cut off. */
export async function startAbortProbe(target: string): Promise<AbortProbe> {
  const upstream = new URL(target);
  const aborted: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const body = Buffer.concat(parts);
      const name = agentOfBody(body);
      res.on("close", () => {
        if (!res.writableFinished) aborted.push(name ?? "?");
      });
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.flushHeaders();
          answer.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      res.on("close", () => forward.destroy());
      forward.end(body);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${upstream.pathname}`,
    aborted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function agentOfBody(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { messages?: RecordedMessage[] };
    return /^Your name: (.+)$/m.exec(identityOf(parsed.messages ?? []) ?? "")?.[1]?.trim();
  } catch {
    return undefined;
  }
}

// --- what the model was sent ---------------------------------------------------------------

/** Matches an agent's first request of a turn (its last message is the user's or a mail). */
export const isFirst = (req: RecordedRequest) => req.lastMessage?.role === "user";

/** Matches a request made right after a call of `tool` was answered. */
export const after = (tool: string) => (req: RecordedRequest) => lastToolName(req) === tool;

/** The requests one agent (by name) made, in order. */
export function requestsOf(fake: FakeModel, name: string): RecordedRequest[] {
  return fake.requests.filter((req) => agentNameOf(req) === name);
}

export interface SeenToolResult {
  id: string;
  name: string;
  /** The result text, JSON-parsed. */
  value: unknown;
}

/** The tool results following the request's last assistant message, with their tools' names. */
export function lastToolResults(req: RecordedRequest): SeenToolResult[] {
  const lastAssistant = req.messages.findLastIndex((m) => m.role === "assistant");
  if (lastAssistant < 0) return [];
  const calls = req.messages[lastAssistant]!.tool_calls ?? [];
  return req.messages
    .slice(lastAssistant + 1)
    .filter((m): m is RecordedMessage & { tool_call_id: string } => m.role === "tool")
    .map((m) => ({
      id: m.tool_call_id,
      name: calls.find((c) => c.id === m.tool_call_id)?.function.name ?? "?",
      value: JSON.parse(m.content ?? "null") as unknown,
    }));
}

/** The name of the tool whose result is the request's last message, if it is one. */
export function lastToolName(req: RecordedRequest): string | undefined {
  if (req.lastMessage?.role !== "tool") return undefined;
  return lastToolResults(req).at(-1)?.name;
}

/** Matches a request whose last message is a user message starting with `prefix`. */
export function lastUserStartsWith(prefix: string) {
  return (req: RecordedRequest) =>
    req.lastMessage?.role === "user" && (req.lastMessage.content ?? "").startsWith(prefix);
}

/**
 * The request's last message is a child's first: its task ("Your task:…"), or an inherited
 * child's message after its parent's request, which ends with its task.
 */
export const isTask = (req: RecordedRequest) =>
  req.lastMessage?.role === "user" &&
  /(^|\n)Your task:\n/.test(req.lastMessage.content ?? "") &&
  ((req.lastMessage.content ?? "").startsWith("Your task") ||
    (req.lastMessage.content ?? "").startsWith(INHERITED_HEAD));

/** The `{agent_id, name}` results of the `fork` calls the request answers, by child name. */
export function forkedIds(req: RecordedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const message of req.messages.filter((m) => m.role === "tool")) {
    const value = JSON.parse(message.content ?? "null") as { agent_id?: string; name?: string };
    if (value && typeof value.agent_id === "string" && typeof value.name === "string") {
      out[value.name] = value.agent_id;
    }
  }
  return out;
}

// --- what the database holds ---------------------------------------------------------------

export async function treeAgents(db: Db, treeId: string): Promise<AgentRow[]> {
  return db
    .select()
    .from(agents)
    .where(eq(agents.tree_id, treeId))
    .orderBy(asc(agents.created_at), asc(agents.id));
}

export async function agentNamed(db: Db, treeId: string, name: string): Promise<AgentRow> {
  const found = (await treeAgents(db, treeId)).filter((a) => a.name === name);
  if (found.length !== 1) throw new Error(`expected one agent "${name}", found ${found.length}`);
  return found[0]!;
}

export async function eventsOf(db: Db, agentId: string): Promise<EventRow[]> {
  return db.select().from(events).where(eq(events.agent_id, agentId)).orderBy(asc(events.id));
}

export async function mailOf(db: Db, treeId: string): Promise<MailRow[]> {
  return db.select().from(mail).where(eq(mail.tree_id, treeId)).orderBy(asc(mail.id));
}

/** Kinds of an agent's events, in order (a compact transcript for assertions). */
export async function kindsOf(db: Db, agentId: string): Promise<string[]> {
  return (await eventsOf(db, agentId)).map((e) => e.kind);
}
