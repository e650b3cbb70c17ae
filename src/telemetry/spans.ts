// The spans, metrics and log events of agent turns, in OpenTelemetry's GenAI semantic conventions:
// `invoke_agent <name>` per run of an agent's turn, `chat <model>` per model request,
// `execute_tool <name>` per tool call; warren's own attributes under `warren.*`. Only the API is
// used here (a no-op until sdk.ts registers a provider in this thread); with telemetry off every
// function returns at its first line. Parents are passed explicitly (no context manager): an
// agent's spans hang off its run's span, kept per agent id for this thread (a lease means one
// run per agent at a time), and a child's run off the `fork` span stored on its row.
import {
  logs,
  metrics,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Counter,
  type Histogram,
  type Link,
  type Span,
} from "@opentelemetry/api";
import { contextOf, formatTraceparent, parseTraceparent } from "./traceparent.js";

/** What the spans need of an agent's row (a structural type: telemetry sits below agents/). */
export interface TracedAgent {
  id: string;
  name: string;
  tree_id: string;
  parent_id: string | null;
  /** The traceparent of the span this agent's runs descend from (its parent's fork call). */
  trace_context?: string | null;
}

/** What a model request's span records of its response. */
export interface ChatResult {
  usage: {
    inputTokens: number;
    outputTokens: number;
    cachedTokens?: number;
    reasoningTokens?: number;
  };
  finishReason: string | null;
  text: string;
  /** USD, when the model has a price. */
  cost?: number;
}

/** What a tool call's span records of its outcome. */
export type ToolEnd =
  { ok: true; value: unknown } | { ok: false; error: { code: string; message: string } };

interface Instruments {
  tokens: Histogram;
  cost: Counter;
  requests: Counter;
  toolCalls: Counter;
  approvalWait: Histogram;
}

interface Active {
  logContent: boolean;
  host: string;
  instruments: Instruments;
}

/** Set by sdk.ts once a provider is registered in this thread; undefined: telemetry off. */
let active: Active | undefined;

const runs = new Map<string, Span>();
const tools = new Map<string, { span: Span; agent: TracedAgent; name: string }>();

const tracer = () => trace.getTracer("warren");

/** Turns the spans on in this thread (sdk.ts, after registering its providers). */
export function activateSpans(options: { logContent: boolean; host: string }): void {
  const meter = metrics.getMeter("warren");
  active = {
    ...options,
    instruments: {
      tokens: meter.createHistogram("gen_ai.client.token.usage", {
        unit: "{token}",
        description: "Tokens per model request, by gen_ai.token.type (input, output, cached)",
      }),
      cost: meter.createCounter("warren.cost", { unit: "USD", description: "Model spend" }),
      requests: meter.createCounter("warren.model.requests", {
        description: "Model requests, by outcome",
      }),
      toolCalls: meter.createCounter("warren.tool.calls", {
        description: "Tool calls, by tool and outcome",
      }),
      approvalWait: meter.createHistogram("warren.approval.wait", {
        unit: "s",
        description: "How long tool calls waited for a person's approval",
      }),
    },
  };
}

/** Off again (tests; a thread's shutdown). Spans still open are ended. */
export function deactivateSpans(): void {
  for (const span of runs.values()) span.end();
  for (const { span } of tools.values()) span.end();
  runs.clear();
  tools.clear();
  active = undefined;
}

export function telemetryOn(): boolean {
  return active !== undefined;
}

function agentAttributes(agent: TracedAgent): Attributes {
  return {
    "gen_ai.agent.id": agent.id,
    "gen_ai.agent.name": agent.name,
    "warren.tree.id": agent.tree_id,
    ...(agent.parent_id ? { "warren.parent.id": agent.parent_id } : {}),
    "warren.worker.host": active?.host ?? "",
  };
}

/**
 * The `invoke_agent` span of the agent's run in this thread, started on first use: a child of
 * the span its row names (its parent's `fork` call, maybe in another process), else a new trace.
 */
function runSpan(agent: TracedAgent): Span {
  let span = runs.get(agent.id);
  if (!span) {
    span = tracer().startSpan(
      `invoke_agent ${agent.name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: { "gen_ai.operation.name": "invoke_agent", ...agentAttributes(agent) },
      },
      contextOf(agent.trace_context),
    );
    runs.set(agent.id, span);
  }
  return span;
}

/**
 * Starts a root's run span, if none is started in this thread yet. A run that starts a turn starts
 * a new trace and returns its traceparent, for the root's row; a run that resumes a turn (its lease
 * lost, its worker killed or stopped) joins the trace the row names, under the run it resumes, so
 * one tree run stays one trace whichever worker finishes it.
 */
export function beginRootRun(agent: TracedAgent, startingTurn: boolean): string | undefined {
  if (!active || agent.parent_id !== null || runs.has(agent.id)) return undefined;
  if (!startingTurn) {
    runSpan(agent);
    return undefined;
  }
  return formatTraceparent(runSpan({ ...agent, trace_context: null }).spanContext());
}

/** Ends the agent's run span (runAgent's end), if one was started. */
export function endRun(agentId: string, how: string): void {
  const span = runs.get(agentId);
  if (!span) return;
  runs.delete(agentId);
  span.setAttribute("warren.run.end", how);
  span.end();
}

/** A model request's span, under the agent's run; end it with endChat or failChat. */
export function startChat(agent: TracedAgent, model: string): Span | undefined {
  if (!active) return undefined;
  const parent = trace.setSpan(ROOT_CONTEXT, runSpan(agent));
  return tracer().startSpan(
    `chat ${model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        ...agentAttributes(agent),
      },
    },
    parent,
  );
}

export function endChat(span: Span | undefined, model: string, result: ChatResult): void {
  if (!span || !active) return;
  const { usage } = result;
  span.setAttributes({
    // The adapter asks for one model and the server's chunks are not kept apart from it.
    "gen_ai.response.model": model,
    "gen_ai.usage.input_tokens": usage.inputTokens,
    "gen_ai.usage.output_tokens": usage.outputTokens,
    "gen_ai.usage.cache_read.input_tokens": usage.cachedTokens ?? 0,
    "warren.usage.reasoning_tokens": usage.reasoningTokens ?? 0,
    ...(result.finishReason ? { "gen_ai.response.finish_reasons": [result.finishReason] } : {}),
    ...(result.cost !== undefined ? { "warren.cost.usd": result.cost } : {}),
    ...(active.logContent ? { "warren.response.text": result.text } : {}),
  });
  span.end();
  const at = { "gen_ai.operation.name": "chat", "gen_ai.request.model": model };
  const { instruments } = active;
  instruments.tokens.record(usage.inputTokens, { ...at, "gen_ai.token.type": "input" });
  instruments.tokens.record(usage.outputTokens, { ...at, "gen_ai.token.type": "output" });
  if (usage.cachedTokens) {
    instruments.tokens.record(usage.cachedTokens, { ...at, "gen_ai.token.type": "cached" });
  }
  if (result.cost !== undefined) instruments.cost.add(result.cost, at);
  instruments.requests.add(1, { ...at, outcome: "ok" });
}

/** A failed model request: the span's status, a counted failure and an `error` log event. */
export function failChat(span: Span | undefined, model: string, err: unknown): void {
  if (!span || !active) return;
  const message = err instanceof Error ? err.message : String(err);
  const aborted = err instanceof Error && err.name === "AbortError";
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute("error.type", aborted ? "aborted" : errorType(err));
  span.end();
  const at = { "gen_ai.operation.name": "chat", "gen_ai.request.model": model };
  active.instruments.requests.add(1, { ...at, outcome: aborted ? "aborted" : "error" });
  if (!aborted) logEvent("warren.model.error", `model error: ${message}`, span, at, "ERROR");
}

function errorType(err: unknown): string {
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === "number") return String(status);
  return err instanceof Error ? err.name : "error";
}

/** A tool call's span, under the agent's run; the call's own attributes go on with noteTool. */
export function startTool(
  agent: TracedAgent,
  call: { id: string; name: string; arguments: string },
): void {
  if (!active) return;
  const parent = trace.setSpan(ROOT_CONTEXT, runSpan(agent));
  const span = tracer().startSpan(
    `execute_tool ${call.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        ...agentAttributes(agent),
        ...(active.logContent ? { "gen_ai.tool.call.arguments": call.arguments } : {}),
      },
    },
    parent,
  );
  tools.set(call.id, { span, agent, name: call.name });
}

/** Attributes of a running tool call (the approval's decision and who gave it). */
export function noteTool(callId: string, attributes: Attributes): void {
  tools.get(callId)?.span.setAttributes(attributes);
}

/** How long a call waited for a person's answer (the `warren.approval.wait` metric). */
export function recordApprovalWait(tool: string, seconds: number, status: string): void {
  active?.instruments.approvalWait.record(seconds, { "gen_ai.tool.name": tool, status });
}

/** Ends a tool call's span with its outcome; a denied call is also a log event. */
export function endTool(callId: string, outcome: ToolEnd): void {
  const entry = tools.get(callId);
  if (!entry || !active) return;
  tools.delete(callId);
  const { span, agent, name: tool } = entry;
  const result = outcome.ok ? "ok" : outcome.error.code;
  span.setAttribute("warren.tool.outcome", result);
  const value = outcome.ok ? (outcome.value as Record<string, unknown> | null) : null;
  // bash's result says how the command ended (the sandbox's mode was noted when it started).
  if (value && typeof value === "object" && "exit_code" in value) {
    span.setAttribute("warren.sandbox.exit_code", Number(value.exit_code ?? -1));
    if (value.timed_out === true) span.setAttribute("warren.sandbox.timed_out", true);
    if (value.interrupted === true) span.setAttribute("warren.sandbox.interrupted", true);
  }
  if (!outcome.ok) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.code });
    span.setAttribute("error.type", outcome.error.code);
    if (active.logContent) span.setAttribute("warren.tool.error", outcome.error.message);
  }
  span.end();
  active.instruments.toolCalls.add(1, { "gen_ai.tool.name": tool, outcome: result });
  if (!outcome.ok && outcome.error.code === "NOT_ALLOWED") {
    logEvent(
      "warren.tool.denied",
      // The reason names the command: content, shown only with log_content.
      active.logContent ? outcome.error.message : `${tool} was not allowed`,
      span,
      { "gen_ai.tool.name": tool, "gen_ai.tool.call.id": callId, ...agentAttributes(agent) },
      "WARN",
    );
  }
}

/** A mail taken in: its id and the traceparent of the span that sent it (mail.trace_context). */
export interface MailLink {
  id: number;
  traceContext: string | null | undefined;
}

/** Span links to the senders' spans (mail sent with telemetry off has none). */
function linksTo(mail: MailLink[]): Link[] {
  const links: Link[] = [];
  for (const m of mail) {
    const context = parseTraceparent(m.traceContext);
    if (context) links.push({ context, attributes: { "warren.mail.id": m.id } });
  }
  return links;
}

/** A `wait` call's span links to the spans that sent the mail it took (the senders' `send`s). */
export function linkToolToMail(callId: string, mail: MailLink[]): void {
  if (!active) return;
  tools.get(callId)?.span.addLinks(linksTo(mail));
}

/** The agent's run links to the spans that sent the mail it took in (a turn started by mail). */
export function linkRunToMail(agent: TracedAgent, mail: MailLink[]): void {
  if (!active) return;
  const links = linksTo(mail);
  if (links.length > 0) runSpan(agent).addLinks(links);
}

/** The traceparent commands started for the call (or the agent's run) get as TRACEPARENT. */
export function traceparentFor(agentId: string, callId?: string): string | undefined {
  if (!active) return undefined;
  const span = (callId !== undefined ? tools.get(callId)?.span : undefined) ?? runs.get(agentId);
  return span ? formatTraceparent(span.spanContext()) : undefined;
}

/** A shell's settings with TRACEPARENT added to what its commands get (none: unchanged). */
export function withTraceparent<S extends { env: { set: Record<string, string> } }>(
  shell: S,
  traceparent: string | undefined,
): S {
  if (traceparent === undefined) return shell;
  return { ...shell, env: { ...shell.env, set: { ...shell.env.set, TRACEPARENT: traceparent } } };
}

function logEvent(
  name: string,
  body: string,
  span: Span,
  attributes: Attributes,
  severity: "WARN" | "ERROR",
): void {
  logs.getLogger("warren").emit({
    eventName: name,
    severityText: severity,
    severityNumber: severity === "ERROR" ? 17 : 13,
    body,
    attributes: { "event.name": name, ...attributes },
    context: trace.setSpan(ROOT_CONTEXT, span),
  });
}
