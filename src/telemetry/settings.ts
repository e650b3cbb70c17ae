// When telemetry is on and where it goes: the config's `telemetry` block checked, and the standard
// OTEL_* variables read over it. Nothing here loads OpenTelemetry (sdk.ts does, only when on).

type Env = Record<string, string | undefined>;

/** The OTLP encodings over HTTP: `http/protobuf` is the standard's default. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** The config's `telemetry` block, as written (see docs/observability.md). */
export interface TelemetryConfig {
  /** The collector's base URL (OTLP/HTTP; `/v1/traces` etc. are added); absent: off. */
  endpoint?: string;
  protocol?: OtlpProtocol;
  service_name?: string;
  /** `key=value` pairs added to the resource, as OTEL_RESOURCE_ATTRIBUTES. */
  resource_attributes?: Record<string, string>;
  /** Prompt, answer and tool-argument text on spans and log events (default false). */
  log_content?: boolean;
}

/** What a process exports with, once the variables are read over the config (telemetryOf). */
export interface TelemetrySettings {
  /** Base URL for every signal (OTEL_EXPORTER_OTLP_ENDPOINT or the config); traces may differ. */
  endpoint?: string;
  tracesEndpoint?: string;
  protocol: OtlpProtocol;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  traces: boolean;
  logContent: boolean;
}

const FIELDS = ["endpoint", "protocol", "service_name", "resource_attributes", "log_content"];
const PROTOCOLS: readonly string[] = ["http/protobuf", "http/json"];

/** Checks the config's `telemetry` block; throws an Error with one line naming the bad field. */
export function validateTelemetry(value: unknown): TelemetryConfig {
  if (value === undefined || value === null) return {};
  const usage =
    'telemetry must be {"endpoint": "http://host:4318", "protocol": "http/protobuf", ' +
    '"service_name": "…", "resource_attributes": {…}, "log_content": false}';
  if (typeof value !== "object" || Array.isArray(value)) throw new Error(usage);
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => !FIELDS.includes(k));
  if (unknown !== undefined) throw new Error(`${usage}; unknown field "${unknown}"`);
  const out: TelemetryConfig = {};
  if (fields.endpoint !== undefined) {
    if (typeof fields.endpoint !== "string" || !isHttpUrl(fields.endpoint)) {
      throw new Error("telemetry.endpoint must be an http:// or https:// URL");
    }
    out.endpoint = fields.endpoint;
  }
  if (fields.protocol !== undefined) {
    if (typeof fields.protocol !== "string" || !PROTOCOLS.includes(fields.protocol)) {
      throw new Error('telemetry.protocol must be "http/protobuf" or "http/json"');
    }
    out.protocol = fields.protocol as OtlpProtocol;
  }
  if (fields.service_name !== undefined) {
    if (typeof fields.service_name !== "string" || !fields.service_name.trim()) {
      throw new Error("telemetry.service_name must be a non-empty string");
    }
    out.service_name = fields.service_name;
  }
  if (fields.resource_attributes !== undefined) {
    const attrs = fields.resource_attributes;
    if (!attrs || typeof attrs !== "object" || Array.isArray(attrs)) {
      throw new Error('telemetry.resource_attributes must be an object of {"key": "value"}');
    }
    for (const [k, v] of Object.entries(attrs as Record<string, unknown>)) {
      if (typeof v !== "string")
        throw new Error(`telemetry.resource_attributes.${k} must be a string`);
    }
    out.resource_attributes = attrs as Record<string, string>;
  }
  if (fields.log_content !== undefined) {
    if (typeof fields.log_content !== "boolean") {
      throw new Error("telemetry.log_content must be true or false");
    }
    out.log_content = fields.log_content;
  }
  return out;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * The settings in force, or undefined when telemetry is off: on only when an endpoint is set
 * (the config's or OTEL_EXPORTER_OTLP[_TRACES]_ENDPOINT), off with OTEL_SDK_DISABLED=true. The
 * standard variables win over the config file, as they do for every OpenTelemetry SDK.
 */
export function telemetryOf(config: TelemetryConfig, env: Env): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? config.endpoint;
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (endpoint === undefined && tracesEndpoint === undefined) return undefined;
  const protocol = nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? config.protocol ?? "http/protobuf";
  return {
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(tracesEndpoint !== undefined ? { tracesEndpoint } : {}),
    // Anything else (grpc) is not built in: the standard's default rather than a refusal.
    protocol: protocol === "http/json" ? "http/json" : "http/protobuf",
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? config.service_name ?? "warren",
    resourceAttributes: {
      ...config.resource_attributes,
      ...parsePairs(env.OTEL_RESOURCE_ATTRIBUTES),
    },
    traces: (env.OTEL_TRACES_EXPORTER ?? "otlp").trim().toLowerCase() !== "none",
    logContent: config.log_content === true,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined;
}

/** `k1=v1,k2=v2` (values percent-encoded), as OTEL_RESOURCE_ATTRIBUTES; bad pairs are skipped. */
export function parsePairs(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(
        pair.slice(at + 1).trim(),
      );
    } catch {
      // A malformed escape: that pair is left out, as the SDK does.
    }
  }
  return out;
}
