// Conversations that outgrow the context window, through `bin/warren -p` against a fake server
// that refuses over-long requests the way OpenAI does: compaction into `summary` events, one
// compaction and retry on context_length_exceeded, oversized tool results cut with a note.
import { describe, expect, it } from "vitest";
import { INHERITED_HEAD } from "../../src/llm/framing.js";
import {
  after,
  agentNamed,
  eventsOf,
  isFirst,
  requestsOf,
  useE2E,
} from "../runtime/e2e-support.js";
import { requestTokens, type RecordedRequest, type Rule } from "../support/fake-model.js";

const e2e = useE2E();

const isSummariser = (req: RecordedRequest) => (req.systemPrompt ?? "").startsWith("You summarise");

/** Answers every summarising request with a numbered summary that names the last step seen. */
function summariser(): Rule {
  let n = 0;
  return {
    match: isSummariser,
    times: Infinity,
    label: "summariser",
    reply: (req) => {
      const steps = [...(req.lastMessage?.content ?? "").matchAll(/step (\d+) output/g)];
      return { text: `Summary ${++n}: you ran steps up to ${steps.at(-1)?.[1] ?? "?"}.` };
    },
  };
}

/** The root runs `steps` bash calls (about 700 characters of output each), then answers. */
function rootRunningSteps(steps: number, finalReply: object): Rule {
  let step = 0;
  return {
    agent: "root",
    match: (req) => !isSummariser(req) && (isFirst(req) || after("bash")(req)),
    times: steps + 1,
    reply: () =>
      ++step <= steps
        ? {
            toolCalls: [
              { name: "bash", arguments: { command: `yes 'step ${step} output' | head -40` } },
            ],
          }
        : finalReply,
  };
}

describe("long conversations", () => {
  it("keeps a 200-step conversation and an inherited fork within a small window", async () => {
    const fake = e2e.fake();
    fake.quirks({ maxContextTokens: 8000 });
    fake.script([
      summariser(),
      rootRunningSteps(200, {
        toolCalls: [
          { name: "fork", arguments: { name: "reporter", prompt: "Report the last step run." } },
          { name: "wait", arguments: { timeout: 60, from_agents: ["reporter"] } },
        ],
      }),
      { agent: "root", match: after("wait"), reply: { text: "200 steps done." } },
      {
        agent: "reporter",
        match: isFirst,
        reply: { toolCalls: [{ name: "send", arguments: { to: "parent", message: "200" } }] },
      },
      { agent: "reporter", match: after("send"), reply: { text: "Sent." } },
    ]);

    const run = await e2e.prompt("Run the steps.", {
      timeout: 240,
      env: { WARREN_CONTEXT_WINDOW: "8000" },
      config: { budget: { turns: 50, tool_calls: 1000, tokens: 100_000_000 } },
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.json?.text).toBe("200 steps done.");

    // No request was refused, and none came near the window.
    expect(fake.tooLong).toEqual([]);
    expect(Math.max(...fake.requests.map(requestTokens))).toBeLessThan(8000);

    // The scrollback keeps everything; the context starts from the newest summary.
    const db = e2e.db();
    const root = await agentNamed(db, run.json!.tree_id, "root");
    const events = await eventsOf(db, root.id);
    const results = events.filter((e) => e.kind === "tool_result" && e.data?.name === "bash");
    expect(results).toHaveLength(200);
    expect(results[0]!.content).toContain("step 1 output");
    const summaries = events.filter((e) => e.kind === "summary");
    expect(summaries.length).toBeGreaterThan(5);
    const rootRequests = requestsOf(fake, "root");
    const last = rootRequests.at(-1)!;
    expect(last.messages[1]!.content).toContain(`<summary>\n${summaries.at(-1)!.content}`);
    // The summaries were chained: each one saw the one before.
    expect(summaries.at(-1)!.content).toMatch(/^Summary \d+: you ran steps up to \d+\.$/);

    // Every request of the root extends the one before, except the first after a compaction,
    // which starts from the new summary (SPEC §7: compaction is the one, visible, exception).
    const extendsPrevious = (req: RecordedRequest, before: RecordedRequest) =>
      JSON.stringify(req.messages.slice(0, before.messages.length)) ===
      JSON.stringify(before.messages);
    let compactions = 0;
    rootRequests.forEach((req, i) => {
      if (i === 0 || extendsPrevious(req, rootRequests[i - 1]!)) return;
      compactions++;
      expect(req.messages[1]!.content).toMatch(/^Summary of your earlier conversation/);
      // The next request extends the compacted one.
      const next = rootRequests[i + 1];
      if (next && next.messages[1]!.content === req.messages[1]!.content) {
        expect(extendsPrevious(next, req)).toBe(true);
      }
    });
    expect(compactions).toBeGreaterThan(0);

    // The inherited child started from its parent's compacted conversation. Whether its parent's
    // request plus its own message still fits the window depends on a few characters (paths,
    // ids): if it fits, the child's first request is the parent's request with one message of its
    // own (who it is, its task); if not, it compacted at once and its own system prompt says who
    // it is (test/runtime/inherited-context.test.ts shows both shapes deterministically).
    const [reporterFirst] = requestsOf(fake, "reporter");
    const childLast = reporterFirst!.lastMessage!.content ?? "";
    if (reporterFirst!.messages[0]!.content?.includes("Your name: reporter")) {
      expect(reporterFirst!.messages[1]!.content).toMatch(/^Summary of your earlier conversation/);
      expect(childLast).toBe("Your task:\nReport the last step run.");
    } else {
      expect(reporterFirst!.messages[0]!.content).toContain("Your name: root");
      expect(childLast.startsWith(INHERITED_HEAD)).toBe(true);
      expect(childLast).toContain("Your name: reporter");
      expect(childLast).toContain("Report the last step run.");
    }
    // 200 sandboxed bash calls and their compactions: minutes on a loaded 2-core machine.
  }, 240_000);

  it("takes the window from the server's /models listing when the config has none", async () => {
    const fake = e2e.fake();
    fake.quirks({
      models: ["fake-model"],
      contextLengths: { "fake-model": 6000 },
      maxContextTokens: 6000,
    });
    fake.script([summariser(), rootRunningSteps(40, { text: "40 steps done." })]);

    const run = await e2e.prompt("Run the steps.");
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("40 steps done.");
    // Compacted ahead of time: the server never had to refuse a request.
    expect(fake.tooLong).toEqual([]);
    expect(fake.requests.filter(isSummariser).length).toBeGreaterThan(0);
  });

  it("compacts once and retries when the server says the context is too long", async () => {
    const fake = e2e.fake();
    // The configured window is far larger than the server's real one.
    fake.quirks({ maxContextTokens: 5000 });
    fake.script([summariser(), rootRunningSteps(30, { text: "30 steps done." })]);

    const run = await e2e.prompt("Run the steps.", {
      env: { WARREN_CONTEXT_WINDOW: "100000" },
    });
    expect(run.stderr).toBe("");
    expect(run.json?.text).toBe("30 steps done.");
    expect(run.code).toBe(0);

    expect(fake.tooLong.length).toBeGreaterThan(0);
    const db = e2e.db();
    const root = await agentNamed(db, run.json!.tree_id, "root");
    const kinds = (await eventsOf(db, root.id)).map((e) => e.kind);
    expect(kinds.filter((k) => k === "summary").length).toBe(fake.tooLong.length);
    expect(kinds).not.toContain("error");
  });

  it("cuts a tool result too large for the window, saying how to read the rest", async () => {
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: [
            { name: "bash", arguments: { command: "head -c 20000 /dev/zero | tr '\\0' x" } },
          ],
        },
      },
      { agent: "root", match: after("bash"), reply: { text: "That was long." } },
    ]);

    const run = await e2e.prompt("Print a lot.", { env: { WARREN_CONTEXT_WINDOW: "8000" } });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const seen = requestsOf(fake, "root")[1]!.lastMessage!.content!;
    expect(seen.length).toBeLessThanOrEqual(8000);
    // Still JSON: the long field cut, a note beside it.
    const value = JSON.parse(seen) as { output: string; truncated_by_warren: string };
    expect(value.output).toMatch(/^x+$/);
    expect(value.truncated_by_warren).toMatch(
      /\[truncated by warren: \d+ more characters did not fit in the context\. Read the rest in smaller parts/,
    );
    const db = e2e.db();
    const root = await agentNamed(db, run.json!.tree_id, "root");
    const stored = (await eventsOf(db, root.id)).find((e) => e.kind === "tool_result")!;
    expect(stored.content.length).toBeGreaterThan(20000);
  });
});
