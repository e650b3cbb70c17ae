// A local OTLP/HTTP receiver for tests: accepts what warren's exporters POST to /v1/traces,
// /v1/metrics and /v1/logs, decodes OTLP's JSON encoding (http/json), and keeps protobuf bodies
// (http/protobuf) as bytes. Answers 200 with an empty success, as a collector does.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  /** The resource's attributes (service.name, process.pid, service.instance.id…). */
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every JSON body received, by path (/v1/traces, /v1/metrics, /v1/logs). */
  json: { path: string; body: unknown }[];
  /** Every protobuf body received, by path. */
  protobuf: { path: string; body: Buffer }[];
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

/** An OTLP AnyValue in its JSON form, as a plain value. */
function plain(value: Record<string, unknown> | undefined): unknown {
  if (!value) return undefined;
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("boolValue" in value) return value.boolValue;
  if ("arrayValue" in value) {
    const values = (value.arrayValue as { values?: Record<string, unknown>[] }).values ?? [];
    return values.map(plain);
  }
  return value;
}

export function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

/** OTLP/JSON ids are hex strings (the exporter's JSON encoding). */
function hexId(id: unknown): string {
  return typeof id === "string" ? id.toLowerCase() : "";
}

function read(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const json: { path: string; body: unknown }[] = [];
  const protobuf: { path: string; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      const path = req.url ?? "";
      if ((req.headers["content-type"] ?? "").includes("json")) {
        const parsed = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
        json.push({ path, body: parsed });
        if (path === "/v1/traces") collectSpans(parsed, spans);
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
      } else {
        protobuf.push({ path, body });
        res.writeHead(200, { "content-type": "application/x-protobuf" });
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    json,
    protobuf,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function collectSpans(body: Record<string, unknown>, into: ReceivedSpan[]): void {
  const resourceSpans = (body.resourceSpans ?? []) as {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: Record<string, unknown>[] }[];
  }[];
  for (const rs of resourceSpans) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        into.push({
          traceId: hexId(span.traceId),
          spanId: hexId(span.spanId),
          parentSpanId: hexId(span.parentSpanId),
          name: String(span.name),
          attributes: attributesOf(span.attributes as KeyValue[]),
          links: ((span.links ?? []) as Record<string, unknown>[]).map((l) => ({
            traceId: hexId(l.traceId),
            spanId: hexId(l.spanId),
            attributes: attributesOf(l.attributes as KeyValue[]),
          })),
          resource,
        });
      }
    }
  }
}
