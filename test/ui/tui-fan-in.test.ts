// A three-child fan-in in a real terminal (tmux), read as a person reads it: each fork call with
// its child beneath it, nothing said twice (no `↳ forked` notice, no send receipt), the children in
// fork order everywhere (the wait's rows, Ctrl+Down = the last forked, the separator, the panel),
// and the panel covering the screen edge to edge. With WARREN_FAN_IN_CAPTURES=FILE the screens
// are written to FILE (docs/tui.md's pictures come from it).
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { warrenEnv } from "../support/warren.js";
import { after, forkedIds, isFirst } from "../runtime/e2e-support.js";
import { startTerminal } from "./tmux.js";
import { useTuiSuite } from "./tui-suite.js";

const { database, model, terminals } = useTuiSuite();

const NAMES = ["alpha", "bravo", "charlie"];

describe("a three-child fan-in, as a person reads it", { retry: 1 }, () => {
  it("groups each call with its result, says each thing once, and keeps fork order", async () => {
    const fork = (name: string) => ({
      name: "fork",
      arguments: { name, prompt: `Report on ${name}.`, context: "fresh" },
    });
    model().script([
      { agent: "root", match: isFirst, reply: { toolCalls: NAMES.map(fork) } },
      {
        agent: "root",
        match: after("fork"),
        reply: (req) => {
          const ids = forkedIds(req);
          // Named out of fork order: the screen still lists them in it.
          const from = [ids.charlie!, ids.alpha!, ids.bravo!];
          return { toolCalls: [{ name: "wait", arguments: { timeout: 60, from_agents: from } }] };
        },
      },
      { agent: "root", match: after("wait"), reply: { text: "All three reported." } },
      ...NAMES.flatMap((name) => [
        {
          agent: name,
          match: isFirst,
          reply: {
            toolCalls: [
              { name: "send", arguments: { to: "parent", message: `result-${name}` } },
              { name: "bash", arguments: { command: `echo ${name}-out; exit 3` } },
            ],
          },
        },
        { agent: name, match: after("bash"), reply: { text: `${name} done` } },
      ]),
    ]);
    const env = warrenEnv({ databaseUrl: database().url, modelUrl: model().baseURL });
    const t = await startTerminal({ env, args: ["--new"], width: 100, height: 40 });
    terminals.push(t);
    const captures: string[] = [];
    const file = process.env.WARREN_FAN_IN_CAPTURES;
    const keep = (title: string, screen: string) => {
      captures.push(`## ${title}\n\n${screen.replace(/[ \t]+$/gm, "").trimEnd()}\n`);
      if (file) fs.writeFileSync(file, captures.join("\n"));
    };

    await t.waitFor(/\[root [0-9a-f]{8}\]/);
    await t.type("Fork alpha, bravo and charlie; collect their results.");
    await t.keys("Enter");
    const root = await t.waitFor("● All three reported.", 60_000);
    keep("the root after the fan-in", root);
    // Each fork call with its child beneath it, one blank line between the groups, in call order.
    const groups = NAMES.map(
      (name) =>
        `→ fork\\(name: "${name}", prompt: "Report on ${name}\\.", context: "fresh"\\)\\n` +
        `  ← ↳ ${name} [0-9a-f]{8} fresh context`,
    );
    expect(root).toMatch(new RegExp(groups.join("\\n\\n")));
    // Said once: no notice repeating the fork results.
    expect(root).not.toContain("forked");
    // The wait's rows in fork order (it named charlie first).
    expect(root).toMatch(
      / {2}← 3 agents\n {4}✓ alpha [0-9a-f]{8}: result-alpha\n {4}✓ bravo [0-9a-f]{8}: result-bravo\n {4}✓ charlie [0-9a-f]{8}: result-charlie/,
    );

    // Ctrl+Down: the last forked child.
    await t.keys("C-Down");
    const child = await t.waitFor(/● charlie done/);
    keep("a child's view (Ctrl+Down: the last forked)", child);
    expect(child).toMatch(/\[charlie [0-9a-f]{8}\]/);
    // The separator's neighbours wrap in fork order: before charlie bravo, after it alpha.
    expect(child).toMatch(/↑root ←bravo \[charlie [0-9a-f]{8}\] →alpha /);
    // The send said once, as its ✉ line; bash's output block with its exit code.
    expect(child).toMatch(/✉ to parent: result-charlie\n\n→ bash: echo/);
    expect(child).not.toContain("sent to");
    expect(child).toMatch(/→ bash: echo charlie-out; exit 3\n {2}← charlie-out\n {4}exit 3/);
    await t.keys("C-Left");
    await t.waitFor(/\[bravo [0-9a-f]{8}\]/);
    await t.keys("C-Left");
    await t.waitFor(/\[alpha [0-9a-f]{8}\]/);

    // The panel: the tree in fork order, over the whole screen (no scrollback text around it).
    await t.keys("C-t");
    const panel = await t.waitFor("agents — ");
    keep("the agent panel", panel);
    const rows = panel.split("\n");
    const at = (name: string) =>
      rows.findIndex((r) => new RegExp(`\\b${name} [0-9a-f]{8}`).test(r));
    expect(at("alpha")).toBeGreaterThan(at("root"));
    expect(at("bravo")).toBe(at("alpha") + 1);
    expect(at("charlie")).toBe(at("bravo") + 1);
    const bottom = rows.findIndex((r) => r.startsWith("└"));
    expect(rows[0]!.startsWith("┌")).toBe(true);
    for (const row of rows.slice(1, bottom)) expect(row).toMatch(/^│.*│$/);
    await t.keys("Escape");
    await t.waitForGone("agents — ");
    model().assertAllUsed();
  });
});
