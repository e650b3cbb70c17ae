// blessed compiles every capability of the terminal's terminfo entry to a JavaScript function when
// a screen starts (168 for xterm-256color, each parsed and passed to `new Function`), though a
// screen uses a few dozen: its terminal setup took 12-20 ms here, 5-6 ms with them deferred. For
// the entries blessed ships (which it uses for xterm-256color, and for xterm when the system's
// entry is missing or broken), this defers each capability to its first use.
import path from "node:path";

/** The part of blessed's Tput (lib/tput.js) this touches. */
export interface TputPrototype {
  options?: { stringify?: boolean };
  _compile(info: { file?: string }, key: string, capability: unknown): unknown;
}

type Compiled = (...args: unknown[]) => unknown;

/**
 * Makes `_compile` on `proto` return, for a string capability of an entry under `shippedDir`, a
 * function that compiles it on its first call and then calls the result (blessed calls one as
 * `method.call(tput, params)`). Entries from the system are compiled at once as before: a
 * capability that does not compile makes blessed fall back to one of its own entries, which only
 * an eager compile finds out in time. Booleans and numbers are values, not functions, and
 * `stringify` asks for strings: left as they are.
 */
export function compileTerminfoOnUse(proto: TputPrototype, shippedDir: string): void {
  const compileNow = proto._compile;
  const shipped = (file: string | undefined) => !!file && file.startsWith(shippedDir + path.sep);
  // Patch: Tput.prototype._compile (blessed/lib/tput.js) compiles all 168 at start: here, on use.
  proto._compile = function (this: TputPrototype, info, key, capability) {
    if (
      typeof capability !== "string" ||
      !capability ||
      this.options?.stringify ||
      !shipped(info.file)
    ) {
      return compileNow.call(this, info, key, capability);
    }
    let compiled: Compiled | undefined;
    const compileOnce = () =>
      (compiled ??= compileNow.call(this, info, key, capability) as Compiled);
    return function (this: unknown, ...args: unknown[]) {
      return compileOnce().apply(this, args);
    };
  };
}
