// An agent's question about a host its network gate does not list (SPEC §3: "an unlisted host is
// an approval request"): an approval row of tool `network` whose subject is the host:port, answered
// like any other ("allow for the tree" remembers the host:port for the whole tree). Under
// `--approve none` (and `-p` without an approver) it is refused at once; `--approve all` answers
// tool calls, not the gate: an unlisted host is refused there too, so the config's list stays the
// fence. An allowed host:port counts as listed explicitly (a loopback one too: the person saw it
// named); a deny entry is never asked about.
import { eq, and } from "drizzle-orm";
import {
  awaitAnswer,
  requestApproval,
  treeAllows,
  treeApproveMode,
} from "../approvals/approvals.js";
import { approvals } from "../approvals/approvals.sql.js";
import type { NetworkAsker } from "../sandbox/network/gate.js";
import type { ToolRunDeps } from "./run-deps.js";

/** The tool name approval rows of the network gate carry. */
export const NETWORK_TOOL = "network";

export function networkAsker(deps: Pick<ToolRunDeps, "db" | "bus" | "agent">): NetworkAsker {
  const { db, bus, agent } = deps;
  return {
    key: agent.id,
    async ask(target, signal) {
      const mode = await treeApproveMode(db, agent.tree_id);
      if (mode === "none") {
        return {
          ok: false,
          reason: "reaching it needs a person's approval, and this run answers no",
        };
      }
      if (await treeAllows(db, agent.tree_id, NETWORK_TOOL, target)) return { ok: true };
      if (mode === "all") {
        return { ok: false, reason: "--approve all answers tool calls, not the network gate" };
      }
      const request = await requestApproval(db, {
        treeId: agent.tree_id,
        agentId: agent.id,
        // One request per agent and host: asked again, the same row answers.
        callKey: `network:${target}`,
        tool: NETWORK_TOOL,
        subject: target,
        arguments: JSON.stringify({ host: target }),
        pattern: target,
      });
      let answer = request;
      if (request.status === "cancelled") {
        // Withdrawn before (its command gave up waiting): asked again now.
        const [reopened] = await db
          .update(approvals)
          .set({ status: "pending", answered_at: null })
          .where(and(eq(approvals.id, request.id), eq(approvals.status, "cancelled")))
          .returning();
        answer = reopened ?? request;
      }
      if (answer.status === "pending") {
        try {
          answer = await awaitAnswer(db, bus, answer, signal);
        } catch (err) {
          // The client gave up (its command ended): withdraw the question.
          await db
            .update(approvals)
            .set({ status: "cancelled" })
            .where(and(eq(approvals.id, request.id), eq(approvals.status, "pending")));
          throw err;
        }
      }
      if (answer.status === "allowed") return { ok: true };
      const by = answer.answered_by ? ` by ${answer.answered_by}` : "";
      const why = answer.reason ? `: ${answer.reason}` : "";
      return { ok: false, reason: `the request to reach it was ${answer.status}${by}${why}` };
    },
  };
}
