// Starts OpenTelemetry's SDK in this thread when telemetry is on: traces, metrics and logs, each
// through a batching processor to the OTLP/HTTP exporter of the protocol chosen. Every package of
// the SDK is imported here, dynamically, so a warren without telemetry never loads one.
import { randomUUID } from "node:crypto";
import os from "node:os";
import { diag, DiagLogLevel, logs, metrics, trace } from "@opentelemetry/api";
import { activateSpans, deactivateSpans } from "./spans.js";
import type { TelemetrySettings } from "./settings.js";

export interface Telemetry {
  /** Flushes what is queued and stops, within `SHUTDOWN_MS` whatever the collector does. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** One line for a person: said once per thread, the first time an export fails. */
  warn: (line: string) => void;
  /** The agents by state (the `warren.agents` gauge), read when metrics are collected. */
  agentsByState?: () => Promise<Record<string, number>>;
}

/** An export's bound: a collector that does not answer costs this, never a turn. */
const EXPORT_TIMEOUT_MS = 5_000;
/** Spans queued at most (then the oldest are dropped, as the processor does). */
const MAX_QUEUE = 4_096;
/** The most a thread's stop waits for the last exports. */
const SHUTDOWN_MS = 2_000;
const METRIC_INTERVAL_MS = 30_000;

const NONE: Telemetry = { shutdown: async () => {} };

/** Starts the SDK per `settings` (undefined: off, nothing loaded). */
export async function startTelemetry(
  settings: TelemetrySettings | undefined,
  options: TelemetryOptions,
): Promise<Telemetry> {
  if (!settings) return NONE;
  const json = settings.protocol === "http/json";
  const [core, resources, sdkTrace, sdkMetrics, sdkLogs, traceExp, metricExp, logExp] =
    await Promise.all([
      import("@opentelemetry/core"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/sdk-metrics"),
      import("@opentelemetry/sdk-logs"),
      json
        ? import("@opentelemetry/exporter-trace-otlp-http")
        : import("@opentelemetry/exporter-trace-otlp-proto"),
      json
        ? import("@opentelemetry/exporter-metrics-otlp-http")
        : import("@opentelemetry/exporter-metrics-otlp-proto"),
      json
        ? import("@opentelemetry/exporter-logs-otlp-http")
        : import("@opentelemetry/exporter-logs-otlp-proto"),
    ]);
  let warned = false;
  const failed = (err: unknown) => {
    if (warned) return;
    warned = true;
    const why = err instanceof Error ? err.message : String(err);
    options.warn(
      `telemetry: cannot export to ${settings.tracesEndpoint ?? settings.endpoint} (${oneLine(why)}); what cannot be sent is dropped`,
    );
  };
  // The SDK reports a failed export here and through diag; neither ever throws into a turn.
  core.setGlobalErrorHandler(failed);
  diag.setLogger(
    {
      error: (message: string) => failed(new Error(message)),
      warn: () => {},
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.ERROR,
  );
  const host = os.hostname();
  const resource = resources.resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.instance.id": randomUUID(),
    "host.name": host,
    "process.pid": process.pid,
    ...settings.resourceAttributes,
  });
  const url = (signal: string) =>
    settings.endpoint ? joinUrl(settings.endpoint, signal) : undefined;
  const exporterOptions = (signal: string, explicit?: string) => {
    const target = explicit ?? url(signal);
    return { ...(target ? { url: target } : {}), timeoutMillis: EXPORT_TIMEOUT_MS };
  };
  const stops: (() => Promise<void>)[] = [];
  if (settings.traces) {
    const provider = new sdkTrace.TracerProvider({
      resource,
      spanProcessors: [
        new sdkTrace.BatchSpanProcessor({
          exporter: new traceExp.OTLPTraceExporter(
            exporterOptions("v1/traces", settings.tracesEndpoint),
          ),
          maxQueueSize: MAX_QUEUE,
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        }),
      ],
    });
    trace.setGlobalTracerProvider(provider);
    stops.push(() => provider.shutdown());
  }
  if (settings.endpoint) {
    const meters = new sdkMetrics.MeterProvider({
      resource,
      readers: [
        new sdkMetrics.PeriodicExportingMetricReader({
          exporter: new metricExp.OTLPMetricExporter(exporterOptions("v1/metrics")),
          exportIntervalMillis: METRIC_INTERVAL_MS,
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        }),
      ],
    });
    metrics.setGlobalMeterProvider(meters);
    stops.push(() => meters.shutdown());
    const loggers = new sdkLogs.LoggerProvider({
      resource,
      processors: [
        new sdkLogs.BatchLogRecordProcessor({
          exporter: new logExp.OTLPLogExporter(exporterOptions("v1/logs")),
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        }),
      ],
    });
    logs.setGlobalLoggerProvider(loggers);
    stops.push(() => loggers.shutdown());
    const count = options.agentsByState;
    if (count) {
      metrics
        .getMeter("warren")
        .createObservableGauge("warren.agents", { description: "Agents by state" })
        .addCallback(async (result) => {
          const byState = await count().catch(() => undefined);
          for (const [state, n] of Object.entries(byState ?? {})) result.observe(n, { state });
        });
    }
  }
  activateSpans({ logContent: settings.logContent, host });
  return {
    async shutdown() {
      deactivateSpans();
      const all = Promise.allSettled(stops.map((stop) => stop())).then((results) => {
        const refused = results.find((r) => r.status === "rejected");
        if (refused) failed(refused.reason);
        return true;
      });
      let timer: NodeJS.Timeout | undefined;
      const bounded = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), SHUTDOWN_MS);
        timer.unref();
      });
      // A collector that does not answer (or refuses, retried) is not waited for past the bound.
      if (!(await Promise.race([all, bounded]))) {
        failed(new Error(`no answer within ${SHUTDOWN_MS / 1000} s`));
      }
      clearTimeout(timer);
      trace.disable();
      metrics.disable();
      logs.disable();
    },
  };
}

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 200);
}
