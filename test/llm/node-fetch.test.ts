// The model client's fetch on node:http: what the SDK reads of a response (status, headers, a
// streamed body), the global fetch's failures (aborts, unreachable servers), and redirects,
// which it leaves to the global fetch.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { nodeFetch } from "../../src/llm/node-fetch.js";
import { rejectionOf } from "../support/rejection.js";

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void) {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("nodeFetch", () => {
  it("sends the method, headers and body, and streams back status, headers and body", async () => {
    const url = await serve((req, body, res) => {
      res.writeHead(201, { "content-type": "text/event-stream", "x-echo": req.headers["x-ask"] });
      res.write(`${req.method} ${body}|`);
      setTimeout(() => res.end("done"), 10);
    });
    const response = await nodeFetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "x-ask": "hi", "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get("x-echo")).toBe("hi");
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await response.text()).toBe('POST {"a":1}|done');
  });

  it("decodes a body the server compressed (gzip, deflate, br), as the global fetch does", async () => {
    const text = "data: streamed\n\n".repeat(50);
    const encoders: Record<string, (b: Buffer) => Buffer> = {
      gzip: (b) => zlib.gzipSync(b),
      deflate: (b) => zlib.deflateSync(b),
      br: (b) => zlib.brotliCompressSync(b),
    };
    const url = await serve((req, _body, res) => {
      const coding = req.url!.slice(1);
      res.writeHead(200, { "content-encoding": coding });
      res.end(encoders[coding]!(Buffer.from(text)));
    });
    for (const coding of Object.keys(encoders)) {
      const response = await nodeFetch(`${url}/${coding}`, { method: "POST", body: "{}" });
      expect(await response.text()).toBe(text);
    }
  });

  it("gives an error status with its body, and a 204 without one", async () => {
    const url = await serve((req, _body, res) => {
      if (req.url === "/empty") {
        res.writeHead(204).end();
        return;
      }
      res.writeHead(429, { "retry-after": "3" }).end('{"error":{"message":"slow down"}}');
    });
    const limited = await nodeFetch(`${url}/x`, { method: "POST", body: "{}" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3");
    expect(await limited.json()).toEqual({ error: { message: "slow down" } });
    const empty = await nodeFetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it("fails the body's read, and only that, when the connection drops mid-body", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200);
      res.write("partial");
      setTimeout(() => res.socket!.destroy(), 20);
    });
    for (let i = 0; i < 3; i++) {
      const response = await nodeFetch(url, { method: "POST", body: "x" });
      await expect(response.text()).rejects.toThrow();
    }
  });

  it("follows a redirect as the global fetch does, body and all", async () => {
    const url = await serve((req, body, res) => {
      if (req.url === "/old") res.writeHead(307, { location: "/new" }).end();
      else res.end(`${req.method} ${req.url} ${body}`);
    });
    const response = await nodeFetch(`${url}/old`, { method: "POST", body: "payload" });
    expect(await response.text()).toBe("POST /new payload");
  });

  it("leaves a body that is not text (a Blob, a form) to the global fetch", async () => {
    const url = await serve((req, body, res) => res.end(`${req.method} ${body}`));
    const response = await nodeFetch(url, { method: "POST", body: new Blob(["in a blob"]) });
    expect(await response.text()).toBe("POST in a blob");
  });

  it("fails as the global fetch does: an AbortError when aborted, 'fetch failed' when refused", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200);
      res.write("partial");
    });
    const controller = new AbortController();
    const response = await nodeFetch(url, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toThrow();

    const before = new AbortController();
    before.abort();
    expect((await rejectionOf(nodeFetch(url, { signal: before.signal }))).name).toBe("AbortError");

    server!.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const refused = await rejectionOf(nodeFetch(url));
    expect(refused).toBeInstanceOf(TypeError);
    expect(refused.message).toBe("fetch failed");
    expect(String((refused.cause as Error).message)).toMatch(/ECONNREFUSED/);
  });
});
