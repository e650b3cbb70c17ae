// What MCP servers cost an agent (issue 29). (a) A new agent's first model request with five
// configured MCP servers that each take 2 s to start, their tool lists already stored in the
// database, beside the same request with none: the in-process scheduler, one tree per config,
// children forked one at a time and interleaved, timed from the fork to the fake model receiving
// the child's request. (b) An MCP tools/call through warren's tool (the shared connection, the
// result formatting and cap) beside the SDK's own `client.callTool` to another process of the
// same server, interleaved, p50 each; the difference is what warren adds.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DEFAULT_LIMITS } from "../src/agents/limits.js";
import { createTree, forkAgent } from "../src/agents/tree.js";
import { createBus } from "../src/bus/bus.js";
import { closeDb, createDb } from "../src/db/client.js";
import { createOpenAIModel } from "../src/llm/openai.js";
import { buildTools, readCatalog, refreshCatalog } from "../src/mcp/catalog.js";
import { parseMcpServers, type McpServerConfig } from "../src/mcp/config.js";
import { closeMcpConnections } from "../src/mcp/connections.js";
import { startScheduler, type Scheduler } from "../src/runtime/scheduler.js";
import type { AgentToolContext } from "../src/tools/agent-context.js";
import { agentNameOf, startFakeModel, type FakeModel } from "../test/support/fake-model.js";
import { row, type BenchContext, type BenchRow } from "./report.js";
import { benchConfig, countStates } from "./rig.js";
import { abortError, median, nowMs, percentile } from "./stats.js";

const FAULTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../test/mcp/fixtures/fault-server.mjs",
);
const SLOW_SERVERS = 5;
const START_DELAY_MS = 2_000;
const WARMUP = 3;
const RUNS = 20;
const CALL_WARMUP = 30;
const CALLS = 300;
const REQUEST_TIMEOUT_MS = 30_000;

async function until(what: string, check: () => Promise<boolean> | boolean, signal: AbortSignal) {
  const deadline = Date.now() + REQUEST_TIMEOUT_MS;
  while (!(await check())) {
    if (signal.aborted) throw abortError(signal);
    if (Date.now() > deadline) throw new Error(`mcp bench: ${what} not within 30 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export async function mcpBench(context: BenchContext): Promise<BenchRow[]> {
  const { url, signal, log } = context;
  const db = createDb(url, { max: 4, applicationName: "warren-bench-mcp" });
  const bus = await createBus(url);
  let fake: FakeModel | undefined;
  const schedulers: Scheduler[] = [];
  try {
    // When each agent's first request arrived (its name → ms); every request answered at once.
    const arrived = new Map<string, number>();
    fake = await startFakeModel();
    fake.script({
      reply: (req) => {
        const name = agentNameOf(req);
        if (name && !arrived.has(name)) arrived.set(name, nowMs());
        return { text: "done" };
      },
      times: Infinity,
    });
    const base = benchConfig(fake.baseURL);
    const slow = parseMcpServers(
      Object.fromEntries(
        Array.from({ length: SLOW_SERVERS }, (_, i) => [
          `slow${i}`,
          {
            command: process.execPath,
            args: [FAULTS],
            env: { START_DELAY_MS: String(START_DELAY_MS) },
          },
        ]),
      ),
      {},
      "/",
    );
    const fetchStarted = nowMs();
    await refreshCatalog(db, slow, (w) => log(`mcp: ${JSON.stringify(w)}`));
    const stored = await readCatalog(db, slow);
    if (stored.filter((r) => Array.isArray(r.tools)).length !== SLOW_SERVERS) {
      throw new Error("mcp bench: the slow servers' lists were not stored");
    }
    log(
      `mcp: ${SLOW_SERVERS} servers' lists fetched and stored in ${(nowMs() - fetchStarted).toFixed(0)} ms (each starts in ${START_DELAY_MS} ms)`,
    );
    const model = createOpenAIModel({ baseURL: fake.baseURL, maxRetries: 0 });
    const limits = { ...DEFAULT_LIMITS, maxChildren: WARMUP + RUNS + 1 };
    const trees = await Promise.all(
      (["with-mcp", "without"] as const).map(async (name) => {
        const root = await createTree(db, { name });
        const config = { ...base, mcpServers: name === "with-mcp" ? slow : {} };
        const scheduler = await startScheduler(
          { db, bus, model, config },
          { concurrency: 4, leaseSeconds: 30, treeId: root.tree_id },
        );
        schedulers.push(scheduler);
        return { name, root, samples: [] as number[], tools: 0 };
      }),
    );
    for (let i = 0; i < WARMUP + RUNS && !signal.aborted; i++) {
      // Alternate which goes first, so drift hits both alike.
      for (const tree of i % 2 ? [...trees].reverse() : trees) {
        const child = `${tree.name}-${i}`;
        const started = nowMs();
        await forkAgent(db, tree.root.id, { name: child, prompt: "go", context: "fresh" }, limits);
        await until(`${child}'s first request`, () => arrived.has(child), signal);
        if (i >= WARMUP) tree.samples.push(arrived.get(child)! - started);
        // Quiet before the next one (the child's answer may wake its root).
        await until(
          "the tree to settle",
          async () => (await countStates(db, tree.root.tree_id)).running === 0,
          signal,
        );
      }
    }
    const offered = fake.requests.find((r) => agentNameOf(r) === "with-mcp-0")?.tools ?? [];
    const mcpOffered = offered.filter((t) => t.startsWith("mcp__")).length;
    if (mcpOffered === 0) throw new Error("mcp bench: the agents were offered no MCP tool");
    const [withMcp, without] = trees.map((t) => median(t.samples));
    log(
      `mcp: first request median ${withMcp!.toFixed(1)} ms with ${SLOW_SERVERS} servers (${mcpOffered} MCP tools offered), ${without!.toFixed(1)} ms without`,
    );
    for (const s of schedulers.splice(0)) await s.stop();

    const call = await callOverhead(db, signal, log);
    return [
      row(
        `agent's first model request, ${SLOW_SERVERS} MCP servers (2 s starts, lists stored), median`,
        withMcp!,
        "ms",
        "the same with no MCP server",
        without!,
      ),
      ...call,
    ];
  } finally {
    for (const s of schedulers) await s.stop().catch(() => undefined);
    await closeMcpConnections();
    await fake?.close();
    await bus.close();
    await closeDb(db);
  }
}

/** (b): warren's MCP tool call beside the SDK's direct call, p50 of each, interleaved. */
async function callOverhead(
  db: ReturnType<typeof createDb>,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<BenchRow[]> {
  const servers: Record<string, McpServerConfig> = parseMcpServers(
    { fx: { command: process.execPath, args: [FAULTS] } },
    {},
    "/",
  );
  await refreshCatalog(db, servers);
  const tool = buildTools(await readCatalog(db, servers), servers).find(
    (t) => t.name === "mcp__fx__ok",
  );
  if (!tool) throw new Error("mcp bench: mcp__fx__ok is not offered");
  const ctx = { signal, onWarning: () => undefined } as unknown as AgentToolContext;
  const direct = new Client({ name: "bench", version: "1" }, { capabilities: {} });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FAULTS] }));
  const viaWarren: number[] = [];
  const viaSdk: number[] = [];
  try {
    const once = async (samples?: { warren: number[]; sdk: number[] }) => {
      let started = nowMs();
      const outcome = await tool.run({}, ctx);
      const warren = nowMs() - started;
      if (!outcome.ok) throw new Error(`mcp bench: the call failed: ${outcome.error.message}`);
      started = nowMs();
      await direct.callTool({ name: "ok", arguments: {} }, undefined, { signal });
      const sdk = nowMs() - started;
      samples?.warren.push(warren);
      samples?.sdk.push(sdk);
    };
    for (let i = 0; i < CALL_WARMUP; i++) await once();
    for (let i = 0; i < CALLS && !signal.aborted; i++)
      await once({ warren: viaWarren, sdk: viaSdk });
  } finally {
    await direct.close();
  }
  const p50 = (xs: number[]) => percentile(xs, 50);
  log(
    `mcp: tools/call p50 ${p50(viaWarren).toFixed(3)} ms through warren, ${p50(viaSdk).toFixed(3)} ms with the SDK directly`,
  );
  return [
    row(
      "MCP tools/call p50 through warren",
      p50(viaWarren),
      "ms",
      "SDK client.callTool directly",
      p50(viaSdk),
    ),
    row("MCP tools/call p50 added by warren", p50(viaWarren) - p50(viaSdk), "ms", "goal", 2),
  ];
}
