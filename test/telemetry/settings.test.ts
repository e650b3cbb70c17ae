// The `telemetry` block and the OTEL_* variables (issue 42 §3): off unless an endpoint is set,
// the variables over the file, a bad block refused with one line naming the field.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { parsePairs, telemetryOf } from "../../src/telemetry/settings.js";

function load(file: unknown, env: Record<string, string> = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warren-telemetry-"));
  const config = path.join(dir, "config.json");
  writeFileSync(config, JSON.stringify(file));
  return loadConfig({ WARREN_CONFIG: config, HOME: dir, XDG_CONFIG_HOME: dir, ...env }, dir);
}

describe("telemetry settings", () => {
  it("is off without an endpoint, whatever else is set", () => {
    expect(load({}).telemetry).toBeUndefined();
    expect(
      load({ telemetry: { log_content: true, protocol: "http/json" } }).telemetry,
    ).toBeUndefined();
    expect(
      load({}, { OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }).telemetry,
    ).toBeUndefined();
  });

  it("reads the config's block, and the standard variables over it", () => {
    const block = {
      telemetry: {
        endpoint: "http://collector:4318",
        protocol: "http/json",
        service_name: "from-file",
        resource_attributes: { team: "a", env: "file" },
      },
    };
    expect(load(block).telemetry).toEqual({
      endpoint: "http://collector:4318",
      protocol: "http/json",
      serviceName: "from-file",
      resourceAttributes: { team: "a", env: "file" },
      traces: true,
      logContent: false,
    });
    const over = load(block, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://other:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/v1/traces",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_SERVICE_NAME: "from-env",
      OTEL_RESOURCE_ATTRIBUTES: "env=ci,region=eu%2Dwest",
      OTEL_TRACES_EXPORTER: "none",
    }).telemetry;
    expect(over).toEqual({
      endpoint: "http://other:4318",
      tracesEndpoint: "http://traces:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: "from-env",
      resourceAttributes: { team: "a", env: "ci", region: "eu-west" },
      traces: false,
      logContent: false,
    });
  });

  it("defaults to http/protobuf and the service name warren; OTEL_SDK_DISABLED turns it off", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://localhost:4318" };
    expect(telemetryOf({}, env)).toMatchObject({
      protocol: "http/protobuf",
      serviceName: "warren",
    });
    expect(telemetryOf({}, { ...env, OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });

  it("refuses a bad block with one line naming the field", () => {
    const refused = (block: unknown) => {
      try {
        load({ telemetry: block });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refused({ endpont: "http://x" })).toContain('unknown field "endpont"');
    expect(refused({ endpoint: "localhost:4318" })).toBe(
      "telemetry.endpoint must be an http:// or https:// URL",
    );
    expect(refused({ protocol: "grpc" })).toBe(
      'telemetry.protocol must be "http/protobuf" or "http/json"',
    );
    expect(refused({ log_content: "yes" })).toBe("telemetry.log_content must be true or false");
    expect(refused({ resource_attributes: { a: 1 } })).toBe(
      "telemetry.resource_attributes.a must be a string",
    );
    expect(refused("on")).not.toContain("\n");
  });

  it("parses OTEL_RESOURCE_ATTRIBUTES pairs, skipping malformed ones", () => {
    expect(parsePairs("a=1, b = two ,bad,=x,c=%ZZ,d=%3D")).toEqual({ a: "1", b: "two", d: "=" });
  });
});
