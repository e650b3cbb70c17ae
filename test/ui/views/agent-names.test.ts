// Tool lines name agents the view knows (name + short id) instead of whole ids: a wait's
// from_agents, a kill's agent_id and its result, a send's `to`; a fork's result line reads
// "← fork: NAME ID" with its label visible (dim, not gray); and the first screen.
import { describe, expect, it } from "vitest";
import {
  createScrollbackView,
  renderWelcome,
  type ScrollEntry,
} from "../../../src/ui/views/index.js";
import { agent, event } from "./fixtures.js";
import { screenText } from "./helpers.js";

const color = { color: true };
const ALPHA = "dd1faeff-1111-4222-8333-444455556666";
const BETA = "0b0e7a00-1111-4222-8333-444455556666";
const STRANGER = "5e5e5e5e-1111-4222-8333-444455556666";
const names = (id: string) => ({ [ALPHA]: "alpha", [BETA]: "beta" })[id];
const ev = (...args: Parameters<typeof event>): ScrollEntry => ({
  kind: "event",
  event: event(...args),
});

function show(entries: ScrollEntry[], width = 140): { text: string; lines: string[] } {
  const lines = createScrollbackView(color, { names }).render(entries, width, 100, 0).lines;
  return { text: screenText(lines, width), lines };
}

describe("agents named in tool lines", () => {
  it("names the agents of a wait's from_agents, a kill and a send", () => {
    const { text } = show([
      ev("tool_call", "", {
        name: "wait",
        arguments: JSON.stringify({ timeout: 60, from_agents: [ALPHA, BETA, STRANGER, "gamma"] }),
      }),
      ev("tool_call", "", { name: "kill", arguments: JSON.stringify({ agent_id: BETA }) }),
      ev("tool_result", JSON.stringify({ killed: [BETA, STRANGER] }), { name: "kill" }),
      ev("tool_call", "", {
        name: "send",
        arguments: JSON.stringify({ to: ALPHA, message: "hi" }),
      }),
    ]);
    expect(text).toContain(
      `→ wait(timeout: 60, from_agents: [alpha dd1faeff, beta 0b0e7a00, "${STRANGER}", "gamma"])`,
    );
    expect(text).toContain("→ kill(agent_id: beta 0b0e7a00)");
    expect(text).toContain("  ← killed beta 0b0e7a00, 5e5e5e5e");
    expect(text).toContain("✉ to alpha dd1faeff: hi");
    expect(text).not.toContain(ALPHA);
  });

  it("shows a fork's result as '← ↳ NAME ID' and its context, dim (never gray)", () => {
    const { text, lines } = show([
      ev("tool_result", JSON.stringify({ agent_id: ALPHA, name: "alpha" }), { name: "fork" }),
    ]);
    expect(text).toBe("  ← ↳ alpha dd1faeff inherits context");
    expect(lines[0]).toContain("{blink} inherits context{/blink}");
    expect(lines.join("")).not.toMatch(/gray|grey|blue|black|white/);
  });
});

describe("the first screen", () => {
  it("names the model, the server, the directory and the tree, and how to begin", () => {
    const root = agent({ name: "root", model: null, cwd: "/home/me/project" });
    const lines = renderWelcome(
      {
        agent: root,
        model: "qwen3",
        baseURL: "http://gpu-box:8000/v1",
        agents: 1,
        panelKey: "Ctrl+T",
      },
      80,
      color,
    );
    const text = screenText(lines, 80);
    expect(text).toContain("model      qwen3 on gpu-box:8000");
    expect(text).toContain("directory  /home/me/project");
    expect(text).toMatch(/tree {7}root [0-9a-f]{8} in tree [0-9a-f]{8} · 1 agent/);
    expect(text).toContain("Enter sends");
    expect(text).toContain("/capture then /fork");
    expect(text).toContain("Ctrl+T the agents");
    expect(text).toContain("/help");
  });

  it("says when no model is configured", () => {
    const root = agent({ name: "root", model: null, cwd: "/tmp" });
    const text = screenText(
      renderWelcome(
        { agent: root, agents: 1, panelKey: "Ctrl+T", problem: "no model configured: set X" },
        80,
        color,
      ),
      80,
    );
    expect(text).toContain("model      none configured");
    expect(text).toContain("⚠ no model configured: set X");
  });

  it("names the instruction files read and the agent files that could not be used", () => {
    const root = agent({ name: "root", model: null, cwd: "/tmp" });
    const text = screenText(
      renderWelcome(
        {
          agent: root,
          agents: 1,
          panelKey: "Ctrl+T",
          sources: [
            {
              label: "instructions",
              short: "reads",
              files: ["~/repo/AGENTS.md", "~/repo/pkg/CLAUDE.md"],
              warnings: ["instructions: ~/repo/CLAUDE.md imports ~/repo/x.md, which is not there"],
            },
          ],
          warnings: ['/r/.claude/agents/x.md:3: "model" must be a string'],
        },
        80,
        color,
      ),
      80,
    );
    expect(text).toContain("reads      ~/repo/AGENTS.md, ~/repo/pkg/CLAUDE.md");
    expect(text).toContain('⚠ /r/.claude/agents/x.md:3: "model" must be a string');
    expect(text).toContain(
      "⚠ instructions: ~/repo/CLAUDE.md imports ~/repo/x.md, which is not there",
    );
  });
});
