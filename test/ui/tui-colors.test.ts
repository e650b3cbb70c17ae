// The TUI's colors in a real terminal under the TERM values people have (tmux-256color is tmux's
// default, screen, xterm, xterm-256color) and with NO_COLOR: a small session (the first screen, a
// tool call and its result, a fork, the separator and status bar, the agent panel) captured with
// its SGR attributes; no visible character may be drawn black, white, gray or blue on the default
// background, and NO_COLOR leaves no color at all. With WARREN_ASCII=1 (and on TERM=linux) the
// screen is ASCII only.
import { describe, expect, it } from "vitest";
import { agentNameOf } from "../support/fake-model.js";
import { warrenEnv } from "../support/warren.js";
import { colorSequences, describeCells, parseStyled, unreadable, type SgrColor } from "./sgr.js";
import { startTerminal, type Terminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

async function open(env: Record<string, string | undefined>) {
  const base = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
  delete base.NO_COLOR;
  const terminal = await startTerminal({ env: { ...base, ...env }, args: ["--new"] });
  terminals.push(terminal);
  await terminal.waitFor(/\[root [0-9a-f]{8}\]/);
  return terminal;
}

/**
 * Drives the session; returns the screens captured with attributes on the way: the first screen,
 * the scrollback after a bash call, a fork and an answer, and the agent panel over it.
 */
async function session(
  t: Terminal,
  ascii = false,
  color = true,
): Promise<{ name: string; styled: string }[]> {
  const root = (r: Parameters<typeof agentNameOf>[0]) => agentNameOf(r) === "root";
  const lastTool = (r: Parameters<typeof agentNameOf>[0]) =>
    r.lastMessage?.role === "tool" ? String(r.lastMessage.content ?? "") : "";
  model().script([
    // alpha's answer is mailed to root, marked final (mail/final-answer.ts): root's next turn.
    {
      match: (r) => root(r) && String(r.lastMessage?.content ?? "").startsWith("<mail"),
      reply: { text: "thanks alpha" },
    },
    {
      match: (r) => root(r) && r.lastMessage?.role === "user",
      reply: {
        toolCalls: [{ name: "bash", arguments: { command: "echo visible-output" } }],
      },
    },
    {
      match: (r) => root(r) && lastTool(r).includes("visible-output"),
      reply: { toolCalls: [{ name: "fork", arguments: { name: "alpha", prompt: "say hi" } }] },
    },
    {
      match: (r) => root(r) && lastTool(r).includes("agent_id"),
      reply: { text: "all done here" },
    },
    { agent: "alpha", reply: { text: "hi from alpha" } },
  ]);
  const screens: { name: string; styled: string }[] = [];
  await t.waitFor("/help");
  screens.push({ name: "first screen", styled: await t.styledScreen() });
  await t.type("go");
  await t.keys("Enter");
  await t.waitFor("all done here");
  await t.waitFor("thanks alpha");
  await t.waitFor(ascii ? /~0 o2 x0/ : /◌0 ○2 ✗0/);
  const screen = await t.screen();
  expect(screen).toContain("visible-output");
  expect(screen).toMatch(ascii ? /< Y alpha [0-9a-f]{8}/ : /← ↳ alpha [0-9a-f]{8}/);
  // The child's final answer, marked beside its name in plain words.
  expect(screen).toMatch(
    ascii
      ? /@ from alpha [0-9a-f]{8} \(final\): hi from alpha/
      : /✉ from alpha [0-9a-f]{8} \(final\): hi from alpha/,
  );
  const styled = await t.styledScreen();
  // The mark is bold, and green where there is color.
  const parsed = parseStyled(styled);
  const rowText = (row: number) => parsed.cells.filter((c) => c.row === row).map((c) => c.char);
  const markRow = [...new Set(parsed.cells.map((c) => c.row))].find((row) =>
    rowText(row).join("").includes("(final)"),
  )!;
  const at = rowText(markRow).join("").indexOf("(final)") + 1;
  const mark = parsed.cells.filter((c) => c.row === markRow).slice(at, at + "final".length);
  expect(mark.map((c) => c.char).join("")).toBe("final");
  expect(mark.every((c) => c.bold)).toBe(true);
  if (color) expect(mark.every((c) => isGreen(c.fg))).toBe(true);
  screens.push({ name: "scrollback", styled });
  await t.keys("C-t");
  await t.waitFor(/agents . ..? select/);
  screens.push({ name: "panel", styled: await t.styledScreen() });
  return screens;
}

/** Green as SGR draws it: the basic color 2 (or bright 10), or its 256-color index. */
const isGreen = (fg: SgrColor | undefined) =>
  (fg?.kind === "basic" || fg?.kind === "256") && (fg.index === 2 || fg.index === 10);

/** The visible text of a captured screen (escape sequences removed). */
// eslint-disable-next-line no-control-regex
const plain = (styled: string) => styled.replace(/\x1b\[[0-9;:]*m/g, "");

// A real terminal on a shared 2-core machine: one retry absorbs a timing hiccup (a persistent
// failure still fails); each retry shows in the run's output.
describe("the TUI's colors in a terminal", { retry: 1 }, () => {
  for (const term of ["tmux-256color", "screen", "xterm", "xterm-256color"]) {
    it(`draws nothing black, white, gray or blue under TERM=${term}`, async () => {
      const t = await open({ TERM: term });
      for (const { name, styled } of await session(t)) {
        const parsed = parseStyled(styled);
        const bad = unreadable(parsed);
        expect(bad.length, `${name} (TERM=${term}):\n${describeCells(bad, plain(styled))}`).toBe(0);
        // Faint text is the dim attribute, and there is some (the separator, the status bar).
        expect(parsed.cells.some((c) => c.dim && c.char.trim())).toBe(true);
        expect(colorSequences(parsed).length, name).toBeGreaterThan(0);
      }
    });
  }

  it("uses no color at all with NO_COLOR, only attributes", async () => {
    const t = await open({ NO_COLOR: "1", TERM: "tmux-256color" });
    for (const { name, styled } of await session(t, false, false)) {
      const parsed = parseStyled(styled);
      expect(colorSequences(parsed), name).toEqual([]);
      expect(parsed.cells.some((c) => c.dim && c.char.trim())).toBe(true);
      expect(parsed.cells.some((c) => c.bold && c.char.trim())).toBe(true);
    }
  });

  it("draws only ASCII with WARREN_ASCII=1", async () => {
    const t = await open({ WARREN_ASCII: "1" });
    for (const { name, styled } of await session(t, true)) {
      const text = plain(styled);
      // eslint-disable-next-line no-control-regex
      const foreign = [...new Set(text.match(/[^\x00-\x7f]/g) ?? [])];
      expect(foreign, `${name}:\n${text}`).toEqual([]);
    }
  });

  it("draws only ASCII on the Linux console (TERM=linux)", async () => {
    const t = await open({ TERM: "linux" });
    const text = await t.waitFor("/help");
    // eslint-disable-next-line no-control-regex
    expect(text.match(/[^\x00-\x7f]/g) ?? [], text).toEqual([]);
    expect(text).toMatch(/-- \[root [0-9a-f]{8}\] -+/);
    // The session too (a child's final mail among it): ASCII only.
    for (const { name, styled } of await session(t, true)) {
      const screen = plain(styled);
      // eslint-disable-next-line no-control-regex
      expect([...new Set(screen.match(/[^\x00-\x7f]/g) ?? [])], `${name}:\n${screen}`).toEqual([]);
    }
  });
});
