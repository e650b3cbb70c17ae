import { it } from "vitest";
import { agent, NOW } from "./views/fixtures.js";
import * as v from "../../src/ui/views/index.js";
import { createScreenBuffer } from "./screen-buffer.js";
it("dbg", () => {
  const root = agent({ name: "root", state: "waiting", activity: "waiting for 2 agents", input_tokens: 12000, output_tokens: 345, tool_calls: 7 });
  const c3 = agent({ name: "中文名字😀", parent_id: root.id, tree_id: root.id, state: "idle", created_at: new Date(NOW - 300_000) });
  const lines = v.renderAgentPanel([root, c3], c3.id, NOW, 70, 10, { color: false }).lines;
  console.log(JSON.stringify(lines));
  const b = createScreenBuffer(80, 3);
  b.show(lines);
  console.log(JSON.stringify((b.screen as any).lines[1].slice(60).map((c: any) => c[1])));
});
