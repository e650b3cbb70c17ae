// What the adapter learns from a model server's refusals: which optional request parameters it
// rejects (400 "unknown parameter"), and how long a 429 asks us to wait.

/** Parameters warren sends that some OpenAI-compatible servers reject. */
export const OPTIONAL_PARAMS = ["stream_options", "parallel_tool_calls"] as const;
export type OptionalParam = (typeof OPTIONAL_PARAMS)[number];

// How servers word it: OpenAI "Unrecognized request argument supplied: x", vLLM/pydantic
// "Extra inputs are not permitted", others "unknown parameter", "unsupported parameter: x".
const UNKNOWN_PARAM =
  /unrecogni[sz]ed|unknown (parameter|field|argument)|unsupported (parameter|field|argument)|extra (inputs|fields) (are )?not permitted/i;

/**
 * The optional parameters a 400 says the server rejects: those it names, or every one that was
 * sent when it only says "unknown parameter". Empty when the 400 is about something else.
 */
export function rejectedParams(message: string, sent: OptionalParam[]): OptionalParam[] {
  const named = sent.filter((param) => message.includes(param));
  if (named.length > 0) return named;
  return UNKNOWN_PARAM.test(message) ? sent : [];
}

/**
 * Milliseconds a 429 asks for: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP
 * date. Undefined when the server says nothing usable.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A 429 response rewritten so the SDK does not retry it itself: warren waits as asked. */
export function noSdkRetryOn429(fetchImpl: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (response.status !== 429) return response;
    const headers = new Headers(response.headers);
    headers.set("x-should-retry", "false");
    return new Response(response.body, {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
}

/** Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      const error = new Error("model call aborted", { cause: signal.reason });
      error.name = "AbortError";
      reject(error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}
