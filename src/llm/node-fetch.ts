// The model client's fetch on node:http instead of the global (undici) fetch. The SDK asks little
// of a fetch (a method, headers, a string body, a signal; a status, headers and a body stream
// back), and the global fetch's machinery around that (a Request built, then cloned with its body
// teed, a fetch controller, header lists) cost a worker thread more CPU per model request than
// all the rest of the SDK: without it the fan-in's CPU per child is about 15% lower (bench).
// What this one does not do itself goes to the global fetch: bodies other than text, schemes
// other than http(s), and redirects (the request is sent again there, and followed as before).
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { pipeline, Readable, type Transform } from "node:stream";
import zlib from "node:zlib";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** A Response has no body for these. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/**
 * Content codings decoded as the global fetch decodes them. Without an Accept-Encoding (none is
 * sent) a server may still compress; any other coding is passed on as it came, as there.
 */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

export const nodeFetch: typeof fetch = (input, init) => {
  if (input instanceof Request) return fetch(input, init);
  const url = new URL(input);
  const body = init?.body ?? undefined;
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") return fetch(input, init);
  if (body !== undefined && typeof body !== "string") return fetch(input, init);
  const signal = init?.signal ?? undefined;
  return new Promise<Response>((resolve, reject) => {
    // The global agents keep connections alive (Node 20), closing idle ones after 5 s.
    const request = (secure ? https : http).request(url, {
      method: init?.method ?? "GET",
      headers: headerObject(init?.headers),
      signal,
    });
    // `on`, not `once`: a socket that fails mid-body may report on the request again after the
    // response came (the body's reader sees that failure too); an unheard error would end the thread.
    request.on("error", (err) => reject(fetchError(err, signal)));
    request.once("response", (response) => {
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status) && response.headers.location) {
        drain(response);
        resolve(fetch(input, init));
        return;
      }
      const headers = new Headers();
      const raw = response.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
      const empty = NULL_BODY.has(status) || init?.method === "HEAD";
      // An unread body would hold the connection: one without content is drained at once.
      if (empty) drain(response);
      const stream = empty
        ? null
        : (Readable.toWeb(decoded(response)) as ReadableStream<Uint8Array>);
      try {
        resolve(new Response(stream, { status, statusText: response.statusMessage, headers }));
      } catch (err) {
        // A status a Response cannot carry (outside 200–599): fails as the global fetch would.
        response.destroy();
        reject(new TypeError("fetch failed", { cause: err }));
      }
    });
    request.end(body);
  });
};

/** The body as sent, decoded if it came compressed; a failure of either reaches its reader. */
function decoded(response: IncomingMessage): Readable {
  const coding = response.headers["content-encoding"]?.trim().toLowerCase();
  const decoder = coding === undefined ? undefined : DECODERS[coding];
  if (!decoder) return response;
  return pipeline(response, decoder(), () => {});
}

/** Reads a body nobody will, so its connection is free again; a failure there concerns no one. */
function drain(response: IncomingMessage): void {
  response.on("error", () => {});
  response.resume();
}

function headerObject(headers: RequestInit["headers"]): Record<string, string> {
  const object: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => {
    object[name] = value;
  });
  return object;
}

/** As the global fetch fails: an AbortError when aborted, else "fetch failed" with the cause. */
function fetchError(err: Error, signal: AbortSignal | undefined): Error {
  if (signal?.aborted || err.name === "AbortError") {
    return Object.assign(new DOMException("This operation was aborted", "AbortError"), {
      cause: err,
    });
  }
  return new TypeError("fetch failed", { cause: err });
}
