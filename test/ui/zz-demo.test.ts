import { it } from "vitest";
import { createScreenBuffer } from "./screen-buffer.js";
import { agent, event, NOW } from "./views/fixtures.js";
import * as v from "../../src/ui/views/index.js";
it("demo", () => {
  const W = 70;
  const theme = { color: true };
  const root = agent({ name: "root", state: "waiting", activity: "waiting for 2 agents", input_tokens: 12000, output_tokens: 345, tool_calls: 7 });
  const c1 = agent({ name: "worker-1", parent_id: root.id, tree_id: root.id, state: "running", activity: "bash: ls -la /tmp && sleep 100", created_at: new Date(NOW - 500_000), last_activity_at: new Date(NOW - 120_000) });
  const c2 = agent({ name: "x\x1b[2J{bold}evil{/bold}", parent_id: root.id, tree_id: root.id, state: "dead", created_at: new Date(NOW - 400_000) });
  const c3 = agent({ name: "中文名字😀", parent_id: c1.id, tree_id: root.id, state: "idle", created_at: new Date(NOW - 300_000) });
  const agents = [root, c1, c2, c3];
  const entries: v.ScrollEntry[] = [
    { kind: "event", event: event("user", "Hello there, please do a long thing that wraps around the width of the terminal for sure yes") },
    { kind: "event", event: event("assistant", "Sure.\n\nHere is a list:\n- one\n- two {bold}x{/bold}", { reasoning: "I should think about it" }) },
    { kind: "event", event: event("tool_call", "", { name: "bash", arguments: JSON.stringify({ command: "ls -la\necho hi" }) }) },
    { kind: "event", event: event("tool_result", Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n"), { name: "bash" }) },
    { kind: "event", event: event("tool_call", "", { name: "read_file", arguments: JSON.stringify({ path: "src/a.ts", limit: 5 }) }) },
    { kind: "event", event: event("tool_call", "", { name: "fork", arguments: JSON.stringify({ name: "w", prompt: "p ".repeat(300) }) }) },
    { kind: "event", event: event("tool_result", '{"error":{"code":"UNKNOWN_AGENT","message":"no agent bob"}}', { name: "send", code: "UNKNOWN_AGENT" }) },
    { kind: "event", event: event("tool_call", "", { name: "send", arguments: JSON.stringify({ to: "parent", message: "done: 42" }) }) },
    { kind: "event", event: event("capture", "task one: do this\nand that") },
    { kind: "event", event: event("mail_in", `Mail from worker-1 (${c1.id}): result is 7`, { from: c1.id, from_name: "worker-1", mail_id: 1 }) },
    { kind: "event", event: event("mail_in", `Mail from the person: hi`, { from: null, from_name: "human", mail_id: 2 }) },
    { kind: "event", event: event("fork", `forked w ${c1.id.slice(0,8)}`, { agent_id: c1.id, name: "worker-1" }) },
    { kind: "event", event: event("killed", "killed by the person") },
    { kind: "event", event: event("interrupted", "interrupted by the person") },
    { kind: "event", event: event("error", "model: 401 unauthorized") },
    { kind: "event", event: event("command", "/kill w") },
    { kind: "stream", agentId: root.id, text: "Streaming text x\x1b]0;pwned\x07 so far", reasoning: "hmm thinking" },
    { kind: "notice", id: 1, level: "error", text: "unknown command /foo" },
    { kind: "pending", id: 2, text: "next question" },
  ];
  const sb = v.createScrollbackView(theme);
  const r = sb.render(entries, W, 200, 0);
  const out: string[] = [...r.lines];
  out.push(...v.renderStatusLayer([{ agent_id: c1.id, name: "worker-1", status: "running" }, { agent_id: c2.id, name: c2.name, status: "dead" }, { agent_id: c3.id, name: c3.name, status: "received" }], new Map(agents.map(a => [a.id, a])), NOW, W, theme));
  out.push(v.renderSpinner(root, 3, W, theme, NOW));
  out.push(v.renderSeparator(v.navInfo(agents, c1.id)!, W, theme));
  out.push(v.renderSeparator(v.navInfo(agents, c1.id)!, 40, theme));
  out.push(v.renderStatusBar({ root, current: c1, counts: { running: 1, waiting: 1, idle: 1, dead: 1 }, tokens: 12345, mode: "capture", keysHint: "F2 agents · ^T mouse", problem: "database unreachable — reconnecting…" }, W, theme));
  out.push(v.renderStatusBar({ root, current: c1, counts: { running: 1, waiting: 1, idle: 1, dead: 1 }, tokens: 12345, mode: "normal", keysHint: "F2 agents · ^T mouse" }, W, theme));
  out.push(...v.renderAgentPanel(agents, c3.id, NOW, W, 10, theme).lines);
  out.push(...v.renderTooSmall(30, 5));
  const b = createScreenBuffer(W, out.length + 1);
  const rows = b.show(out);
  console.log(rows.join("\n"));
  console.log(r.maxScroll, r.atTop);
});
