// A fork's child gets its profile's model and budget: the config's `budget`, then the profile's,
// then the call's own `budget`, each over the one before (AUDIT item 8).
import { describe, expect, it } from "vitest";
import { childCapabilities } from "../../src/agents/capabilities.js";
import { loadConfig } from "../../src/config/config.js";
import { getAgent } from "../../src/agents/refs.js";
import { createTree } from "../../src/agents/tree.js";
import { forkTool } from "../../src/tools/fork.js";
import { useBus } from "../support/agents.js";
import { useTestDatabase } from "../support/db.js";
import { toolContext } from "../support/tool-context.js";

const database = useTestDatabase();
const bus = useBus(() => database().url);

describe("fork with a profile", () => {
  it("gives the child the profile's model and budget, the call's budget over both", async () => {
    const { db } = database();
    const root = await createTree(db, { name: "root" });
    const profiles = { reviewer: { model: "gpt-4.1", budget: { turns: 3, tokens: 1000 } } };
    const config = {
      ...loadConfig({ WARREN_CONFIG: "/nonexistent/warren.json" }),
      budget: { turns: 50, tool_calls: 500, tokens: 2_000_000 },
      profiles,
    };
    const ctx = await toolContext(db, bus(), root.id, {
      profiles,
      forkCapabilities: async (request) => childCapabilities(config, root, request),
    });
    const outcome = await forkTool.run(
      { name: "rev", prompt: "review", profile: "reviewer", budget: { tool_calls: 7 } },
      ctx as never,
    );
    expect(outcome.ok).toBe(true);
    const id = (outcome as { value: { agent_id: string } }).value.agent_id;
    const child = (await getAgent(db, id))!;
    expect(child.model).toBe("gpt-4.1");
    expect(child.budget).toEqual({ turns: 3, tool_calls: 7, tokens: 1000 });

    // A call of its own (a new call id: the same one would be answered with the first's result).
    const next = { ...ctx, toolCallId: `${ctx.toolCallId}-2` };
    const plain = await forkTool.run({ name: "plain", prompt: "p" }, next as never);
    const other = (await getAgent(db, (plain as { value: { agent_id: string } }).value.agent_id))!;
    expect(other.model).toBeNull();
    expect(other.budget).toEqual({ turns: 50, tool_calls: 500, tokens: 2_000_000 });
  });
});
