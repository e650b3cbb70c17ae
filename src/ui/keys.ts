// Raw terminal input → key events. We parse stdin ourselves (blessed gets no input) because blessed
// cannot tell Ctrl+arrows, Alt+arrows, Shift+Enter or bracketed paste apart reliably.

export type KeyName =
  | "enter"
  | "newline"
  | "tab"
  | "backtab"
  | "backspace"
  | "delete"
  | "insert"
  | "escape"
  | "up"
  | "down"
  | "left"
  | "right"
  | "home"
  | "end"
  | "pageup"
  | "pagedown"
  /** A control letter (ctrl is set) or an Alt+character (meta is set): the character itself. */
  | string;

export type KeyEvent =
  | { type: "key"; name: KeyName; ctrl: boolean; meta: boolean; shift: boolean }
  /** Printable characters typed. */
  | { type: "text"; text: string }
  /** A bracketed paste: newlines are text, never a submit. */
  | { type: "paste"; text: string }
  | { type: "mouse"; action: "wheelup" | "wheeldown" | "other" }
  /** A left-button press (SGR reports only) on the screen's `row` (0: the top one). */
  | { type: "mouse"; action: "click"; row: number };

export const PASTE_ON = "\x1b[?2004h";
export const PASTE_OFF = "\x1b[?2004l";
/** Button events (wheel) in SGR encoding; terminals then need Shift held to select text. */
export const MOUSE_ON = "\x1b[?1000h\x1b[?1006h";
export const MOUSE_OFF = "\x1b[?1000l\x1b[?1006l";

/**
 * xterm's modifyOtherKeys level 1: keys that are otherwise ambiguous (Shift+Enter) are reported
 * as `ESC [27;mod;code~`; everything else is sent as before. Terminals without it ignore this.
 */
export const MODIFY_KEYS_ON = "\x1b[>4;1m";
export const MODIFY_KEYS_OFF = "\x1b[>4m";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

const key = (
  name: KeyName,
  mods: { ctrl?: boolean; meta?: boolean; shift?: boolean } = {},
): KeyEvent => ({
  type: "key",
  name,
  ctrl: mods.ctrl ?? false,
  meta: mods.meta ?? false,
  shift: mods.shift ?? false,
});

const CSI_FINAL_NAMES: Record<string, KeyName> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
};

const TILDE_NAMES: Record<string, KeyName> = {
  "1": "home",
  "2": "insert",
  "3": "delete",
  "4": "end",
  "5": "pageup",
  "6": "pagedown",
  "7": "home",
  "8": "end",
};

/** xterm's modifier parameter: 1 + (shift 1, alt 2, ctrl 4, meta 8). */
function modifiers(param: string | undefined) {
  const m = Math.max(0, Number(param ?? "1") - 1);
  return { shift: (m & 1) !== 0, meta: (m & 2) !== 0 || (m & 8) !== 0, ctrl: (m & 4) !== 0 };
}

export interface KeyParser {
  /** Parses a chunk of input; an incomplete escape sequence at its end is kept for the next. */
  feed(chunk: string): KeyEvent[];
  /** True while an incomplete sequence (or a lone ESC) waits; call flush() after a short pause. */
  pending(): boolean;
  /** Emits what is pending as keys (a lone ESC is the Escape key). */
  flush(): KeyEvent[];
}

export function createKeyParser(): KeyParser {
  let buffer = "";
  let paste: string | undefined;

  function parse(final: boolean): KeyEvent[] {
    const out: KeyEvent[] = [];
    let text = "";
    const pushText = () => {
      if (text) out.push({ type: "text", text });
      text = "";
    };
    let i = 0;
    while (i < buffer.length) {
      if (paste !== undefined) {
        const end = buffer.indexOf(PASTE_END, i);
        if (end === -1) {
          // Keep a possible partial end marker for the next chunk.
          const keep = final ? 0 : partialSuffix(buffer, PASTE_END);
          paste += buffer.slice(i, buffer.length - keep);
          i = buffer.length - keep;
          break;
        }
        paste += buffer.slice(i, end);
        out.push({ type: "paste", text: paste.replace(/\r\n?/g, "\n") });
        paste = undefined;
        i = end + PASTE_END.length;
        continue;
      }
      const ch = buffer[i]!;
      if (ch === "\x1b") {
        const seq = matchEscape(buffer, i, final);
        if (seq === "incomplete") break;
        pushText();
        if (seq.paste) paste = "";
        else if (seq.event) out.push(seq.event);
        i += seq.length;
        continue;
      }
      const code = ch.charCodeAt(0);
      if (code < 0x20 || code === 0x7f) {
        pushText();
        out.push(controlKey(ch));
        i++;
        continue;
      }
      text += ch;
      i++;
    }
    pushText();
    buffer = buffer.slice(i);
    return out;
  }

  return {
    feed(chunk) {
      buffer += chunk;
      return parse(false);
    },
    pending: () => buffer.length > 0,
    flush() {
      const events = parse(true);
      buffer = "";
      return events;
    },
  };
}

function controlKey(ch: string): KeyEvent {
  switch (ch) {
    case "\r":
      return key("enter");
    case "\n":
      return key("newline"); // Ctrl+J (tmux and most terminals send LF for it)
    case "\t":
      return key("tab");
    case "\x7f":
    case "\x08":
      return key("backspace");
    case "\x00":
      return key("space", { ctrl: true });
    default:
      return key(String.fromCharCode(ch.charCodeAt(0) + 96), { ctrl: true });
  }
}

interface Match {
  length: number;
  event?: KeyEvent;
  paste?: boolean;
}

/** The escape sequence at `i` (buffer[i] is ESC), or "incomplete" when more input may follow. */
function matchEscape(buffer: string, i: number, final: boolean): Match | "incomplete" {
  const rest = buffer.slice(i);
  if (rest.length === 1) return final ? { length: 1, event: key("escape") } : "incomplete";
  if (rest.startsWith(PASTE_START)) return { length: PASTE_START.length, paste: true };
  const second = rest[1]!;
  if (second === "[") return matchCsi(rest, final);
  if (second === "O") {
    if (rest.length < 3)
      return final ? { length: 2, event: key("O", { meta: true }) } : "incomplete";
    return { length: 3, event: ss3(rest[2]!) };
  }
  if (second === "\x1b") {
    // ESC ESC [ D: some terminals' Alt+arrow. Otherwise the first ESC is the Escape key.
    const inner = matchEscape(buffer, i + 1, final);
    if (inner === "incomplete") return inner;
    if (inner.event?.type === "key" && inner.length > 1 && !inner.paste) {
      return { length: inner.length + 1, event: { ...inner.event, meta: true } };
    }
    return { length: 1, event: key("escape") };
  }
  if (second === "\r") return { length: 2, event: key("enter", { meta: true }) };
  if (second === "\x7f" || second === "\x08") {
    return { length: 2, event: key("backspace", { meta: true }) };
  }
  if (second === "b") return { length: 2, event: key("left", { meta: true }) };
  if (second === "f") return { length: 2, event: key("right", { meta: true }) };
  const code = second.codePointAt(0)!;
  if (code < 0x20) return { length: 2, event: { ...controlKey(second), meta: true } as KeyEvent };
  return {
    length: 1 + (code > 0xffff ? 2 : 1),
    event: key(String.fromCodePoint(code), { meta: true }),
  };
}

function ss3(ch: string): KeyEvent {
  const lower: Record<string, KeyName> = { a: "up", b: "down", c: "right", d: "left" };
  if (lower[ch]) return key(lower[ch], { ctrl: true }); // rxvt's Ctrl+arrows
  const name = CSI_FINAL_NAMES[ch];
  if (name) return key(name);
  if (ch === "M") return key("enter");
  return key(ch, { meta: true });
}

function matchCsi(rest: string, final: boolean): Match | "incomplete" {
  // X10 mouse: ESC [ M b x y (three raw bytes).
  if (rest[2] === "M") {
    if (rest.length < 6)
      return final ? { length: rest.length, event: mouse("other") } : "incomplete";
    const button = rest.charCodeAt(3) - 32;
    return { length: 6, event: mouse(wheel(button)) };
  }
  // Parameters and intermediates, then a final byte 0x40-0x7e.
  const body = rest.slice(2); // after ESC [
  const match = /^([<?]?)([\d;:]*)([\x20-\x2f]*)([\x40-\x7e])/.exec(body);
  if (!match) {
    if (!final && /^[<?]?[\d;:]*[\x20-\x2f]*$/.test(body)) return "incomplete";
    return { length: 2, event: key("[", { meta: true }) };
  }
  const [whole, lead, params, , last] = match;
  const parts = params!.split(";");
  const length = 2 + whole.length;
  if (lead === "<") {
    // SGR mouse: ESC [ < b ; x ; y M|m (M: a press; b's low bits the button, 32 motion, 64 wheel)
    const button = Number(parts[0]);
    const row = Number(parts[2]) - 1;
    if (last === "M" && (button & (3 | 32 | 64)) === 0 && row >= 0) {
      return { length, event: { type: "mouse", action: "click", row } };
    }
    return { length, event: mouse(wheel(button)) };
  }
  if (lead === "?") return { length }; // a report we did not ask for: ignore
  if (last === "~") {
    // xterm modifyOtherKeys: ESC [ 27 ; mod ; code ~
    if (parts[0] === "27" && parts.length >= 3) {
      return { length, event: otherKey(Number(parts[2]), modifiers(parts[1])) };
    }
    const name = TILDE_NAMES[parts[0] ?? ""];
    if (name === undefined) return { length };
    return { length, event: key(name, modifiers(parts[1])) };
  }
  if (last === "u") {
    // CSI u (kitty, foot, …): ESC [ code ; mod u
    return { length, event: otherKey(Number(parts[0]), modifiers(parts[1])) };
  }
  if (last === "Z") return { length, event: key("backtab", { shift: true }) };
  if (last === "I" || last === "O") return { length }; // focus in/out
  const name = CSI_FINAL_NAMES[last!];
  if (name === undefined) return { length };
  return { length, event: key(name, modifiers(parts[1])) };
}

function otherKey(code: number, mods: { ctrl: boolean; meta: boolean; shift: boolean }): KeyEvent {
  if (code === 13) return key("enter", mods);
  if (code === 9) return key("tab", mods);
  if (code === 27) return key("escape", mods);
  if (code === 127 || code === 8) return key("backspace", mods);
  if (!Number.isFinite(code) || code < 32) return key("unknown", mods);
  const ch = String.fromCodePoint(code);
  if (!mods.ctrl && !mods.meta) return { type: "text", text: ch };
  return key(ch.toLowerCase(), mods);
}

function wheel(button: number): "wheelup" | "wheeldown" | "other" {
  if ((button & 64) === 0) return "other";
  return (button & 1) === 0 ? "wheelup" : "wheeldown";
}

function mouse(action: "wheelup" | "wheeldown" | "other"): KeyEvent {
  return { type: "mouse", action };
}

/** How many characters at the end of `text` are a proper prefix of `marker`. */
function partialSuffix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
