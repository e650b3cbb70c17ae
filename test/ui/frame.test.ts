// The frame clock: a lone change paints at once, a burst at most once per interval, a key at once
// whatever painted before it, the viewed text early once per interval, and a frame that is not
// ready is tried again.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFrameClock } from "../../src/ui/frame.js";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("the frame clock", () => {
  it("paints a lone change on the next turn, not after a fixed delay", async () => {
    const paint = vi.fn();
    const clock = createFrameClock({ paint, intervalMs: 16 });
    clock.request();
    expect(paint).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(1);
    // Quiet for a while: the next change paints at once again.
    await vi.advanceTimersByTimeAsync(100);
    clock.request();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(2);
    clock.close();
  });

  it("coalesces a burst into one paint per interval", async () => {
    const paint = vi.fn();
    const clock = createFrameClock({ paint, intervalMs: 16 });
    clock.request();
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 50; i++) clock.request();
    await vi.advanceTimersByTimeAsync(10);
    expect(paint).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(6);
    expect(paint).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(paint).toHaveBeenCalledTimes(2);
    clock.close();
  });

  it("paints a key on the next turn even within the interval, once however many keys", async () => {
    const paint = vi.fn();
    const clock = createFrameClock({ paint, intervalMs: 16 });
    clock.request();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(1);
    // An update just after a paint waits for the interval; a key then paints at once.
    await vi.advanceTimersByTimeAsync(2);
    clock.request();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(1);
    clock.requestNow();
    clock.requestNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(2);
    // Nothing left over: the interval's timer went with the key's paint.
    await vi.advanceTimersByTimeAsync(100);
    expect(paint).toHaveBeenCalledTimes(2);
    clock.close();
  });

  it("paints the viewed text early at most once per interval", async () => {
    const { paint, clock } = await afterTextPaint();
    // A second one within the interval of the first early paint waits for the interval.
    await vi.advanceTimersByTimeAsync(2);
    clock.requestText();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(16);
    expect(paint).toHaveBeenCalledTimes(3);
    clock.close();
  });

  it("paints a key on the next turn right after the text's early paint, and after another key's", async () => {
    const { paint, clock } = await afterTextPaint();
    // A streaming agent's deltas spend the text's budget; a key typed then does not wait for it.
    await vi.advanceTimersByTimeAsync(1);
    clock.requestNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(3);
    // Nor does the next key (or the history of the agent a key switched to) a millisecond later.
    await vi.advanceTimersByTimeAsync(1);
    clock.requestNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(4);
    clock.close();
  });

  it("tries a frame that was not ready again, and paints later requests; close stops it all", async () => {
    let ready = false;
    const paint = vi.fn(() => (ready ? undefined : 50));
    const clock = createFrameClock({ paint, intervalMs: 16 });
    clock.request();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(50);
    expect(paint).toHaveBeenCalledTimes(2);
    ready = true;
    clock.request();
    await vi.advanceTimersByTimeAsync(0);
    expect(paint).toHaveBeenCalledTimes(3);
    clock.requestIn(30);
    clock.close();
    await vi.advanceTimersByTimeAsync(100);
    expect(paint).toHaveBeenCalledTimes(3);
  });

  it("asks for a paint later (requestIn)", async () => {
    const paint = vi.fn();
    const clock = createFrameClock({ paint, intervalMs: 16 });
    clock.requestIn(200);
    await vi.advanceTimersByTimeAsync(199);
    expect(paint).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(1); // the paint it asked for, on the next turn
    expect(paint).toHaveBeenCalledTimes(1);
    clock.close();
  });
});

/** A clock that painted once, then the viewed text's early paint 2 ms later: two paints. */
async function afterTextPaint() {
  const paint = vi.fn();
  const clock = createFrameClock({ paint, intervalMs: 16 });
  clock.request();
  await vi.advanceTimersByTimeAsync(0);
  await vi.advanceTimersByTimeAsync(2);
  clock.requestText();
  await vi.advanceTimersByTimeAsync(0);
  expect(paint).toHaveBeenCalledTimes(2);
  return { paint, clock };
}
