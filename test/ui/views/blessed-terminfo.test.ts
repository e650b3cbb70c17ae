// Terminal capabilities compiled on first use, for the terminfo entries blessed ships: each gives
// the very escape sequence blessed's own eager compile gives, and none is compiled before it is
// used; an entry from elsewhere is still compiled at once (blessed falls back when one fails).
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  compileTerminfoOnUse,
  type TputPrototype,
} from "../../../src/ui/views/blessed-terminfo.js";

interface Tput extends TputPrototype {
  info: { name: string; file: string };
  methods: Record<string, unknown>;
  cup(row: number, column: number): string;
}
interface TputClass {
  new (options: { terminal: string }): Tput;
  prototype: Tput;
}

const require = createRequire(import.meta.url);
const BlessedTput = require("blessed/lib/tput.js") as TputClass;
const shippedDir = path.dirname(require.resolve("blessed/usr/xterm"));
const SHIPPED = ["xterm", "xterm-256color", "linux", "windows-ansi"];
const PARAMS = [[], [7], [3, 12], [1, 2, 3, 4, 5, 6, 7, 8, 9], [255, 0, 128]];

/** A Tput class compiling on use, over `base`, leaving blessed's own class as it is. */
function lazyTput(base: TputClass = BlessedTput): TputClass {
  const Lazy = class extends base {};
  compileTerminfoOnUse(Lazy.prototype, shippedDir);
  return Lazy;
}

/** A Tput class that records the string capabilities it compiles. */
function countingTput(compiled: string[]): TputClass {
  const Counting = class extends BlessedTput {};
  Counting.prototype._compile = function (info, key, capability) {
    if (typeof capability === "string" && capability) compiled.push(key);
    return BlessedTput.prototype._compile.call(this, info, key, capability);
  };
  return Counting;
}

/** What a capability gives for `params`, or the error it throws (some do, eager or not). */
function call(method: unknown, tput: Tput, params: number[]): unknown {
  try {
    // A copy each time: terminfo's %i increments the parameters in place.
    return (method as (this: Tput, params: number[]) => unknown).call(tput, [...params]);
  } catch (error) {
    return { threw: (error as Error).message };
  }
}

// Lower case: blessed lowercases the terminal's name, a path included.
const temp = path.join(os.tmpdir(), `warren-terminfo-${randomUUID()}`);
fs.mkdirSync(temp);
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }));

describe("terminfo compiled on first use", () => {
  it.each(SHIPPED)("gives what blessed's eager compile gives for its own %s", (name) => {
    const terminal = path.join(shippedDir, name);
    const eager = new BlessedTput({ terminal });
    const lazy = new (lazyTput())({ terminal });
    expect(lazy.info.file).toBe(terminal);
    expect(Object.keys(lazy.methods).sort()).toEqual(Object.keys(eager.methods).sort());
    let functions = 0;
    for (const [key, want] of Object.entries(eager.methods)) {
      const got = lazy.methods[key];
      if (typeof want !== "function") {
        expect(got, key).toBe(want);
        continue;
      }
      functions++;
      for (const params of PARAMS) {
        expect(call(got, lazy, params), `${name} ${key}(${params})`).toEqual(
          call(want, eager, params),
        );
      }
    }
    expect(functions).toBeGreaterThan(100);
  });

  it("compiles a capability on its first use only", () => {
    const compiled: string[] = [];
    const tput = new (lazyTput(countingTput(compiled)))({
      terminal: path.join(shippedDir, "xterm-256color"),
    });
    expect(compiled).toEqual([]);
    expect(tput.cup(4, 9)).toBe("\x1b[5;10H");
    expect(tput.cup(0, 0)).toBe("\x1b[1;1H");
    expect(compiled).toEqual(["cursor_address"]);
  });

  it("compiles an entry from elsewhere at once, as blessed does", () => {
    const copy = path.join(temp, "xterm-256color");
    fs.copyFileSync(path.join(shippedDir, "xterm-256color"), copy);
    const compiled: string[] = [];
    const tput = new (lazyTput(countingTput(compiled)))({ terminal: copy });
    expect(tput.info.file).toBe(copy);
    expect(compiled.length).toBeGreaterThan(100);
  });
});
