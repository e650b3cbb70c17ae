// The measured bypasses of issue 38 end to end, through the real `bin/warren -p --approve none`
// (its default), the fake model and real bash: under a policy allowing `ls*` and `echo*` and
// denying `rm *`, a command tree-sitter read as one allowed `ls` (a line continuation before a
// `#`), and an `rm` spelt as a brace or a glob, each ran before. Now the first is asked — refused
// without an approver — and the others (one naming rm behind the same trick) are denied; nothing
// is created, nothing removed.
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { after, isFirst, lastToolResults, requestsOf, useE2E } from "../runtime/e2e-support.js";

const e2e = useE2E();

describe("issue 38's bypasses through warren -p --approve none", () => {
  it("a parser disagreement is asked and refused; a brace or glob rm is denied; nothing ran", async () => {
    // Under /var/tmp: the sandbox's /tmp is private.
    const cwd = mkdtempSync("/var/tmp/warren-policy-bypass-");
    for (const dir of ["b", "c", "d"]) mkdirSync(path.join(cwd, dir));
    const commands = [
      "ls x\\\n#; touch a; echo b",
      "ls x\\\n#; touch a; rm -rf b",
      "echo x; {rm,-rf,c}",
      "/bin/r? -rf d",
      "ls -la",
    ];
    const fake = e2e.fake();
    fake.script([
      {
        agent: "root",
        match: isFirst,
        reply: {
          toolCalls: commands.map((command) => ({ name: "bash", arguments: { command } })),
        },
      },
      { agent: "root", match: after("bash"), reply: { text: "done" } },
    ]);
    const run = await e2e.prompt("go", {
      cwd,
      env: { WARREN_APPROVE: "" },
      config: { policy: { bash: { allow: ["ls*", "echo*"], deny: ["rm *"] } } },
    });
    expect(run.json?.text).toBe("done");
    const results = lastToolResults(requestsOf(fake, "root")[1]!).map(
      (r) => r.value as { error?: { code: string; message: string }; exit_code?: number },
    );
    expect(results).toHaveLength(5);
    expect(results[0]!.error?.code).toBe("NOT_ALLOWED");
    expect(results[0]!.error?.message).toContain("needs a person's approval");
    for (const denied of results.slice(1, 4)) {
      expect(denied.error?.message).toContain("denied by the tool policy");
    }
    // What the policy allows still runs unasked.
    expect(results[4]!.exit_code).toBe(0);
    expect(existsSync(path.join(cwd, "a"))).toBe(false);
    for (const dir of ["b", "c", "d"]) expect(existsSync(path.join(cwd, dir))).toBe(true);
  });
});
