// Slash-command parsing: shell-like quoting, typed commands, one-line errors with suggestions.
import { describe, expect, it } from "vitest";
import { isCommand, parseCommand, splitArgs } from "../../src/ui/commands.js";

describe("splitArgs", () => {
  it("splits like a shell", () => {
    expect(splitArgs(`a "b c" 'd "e"' f\\ g "h\\"i"`)).toEqual({
      ok: true,
      args: ["a", "b c", 'd "e"', "f g", 'h"i'],
    });
    expect(splitArgs(`""`)).toEqual({ ok: true, args: [""] });
    expect(splitArgs(`"open`)).toEqual({ ok: false, error: "unclosed double quote" });
  });
});

describe("parseCommand", () => {
  it("parses every command", () => {
    expect(isCommand("/fork")).toBe(true);
    expect(isCommand("//not a command")).toBe(false);
    expect(isCommand("hello /fork")).toBe(false);
    expect(parseCommand("/capture")).toEqual({ ok: true, command: { name: "capture" } });
    expect(parseCommand(`/fork --name "tests runner" "run the tests"`)).toEqual({
      ok: true,
      command: { name: "fork", childName: "tests runner", prompt: "run the tests" },
    });
    expect(parseCommand("/fork run it all")).toEqual({
      ok: true,
      command: { name: "fork", prompt: "run it all" },
    });
    expect(parseCommand("/fork")).toEqual({ ok: true, command: { name: "fork" } });
    expect(parseCommand("/kill")).toEqual({ ok: true, command: { name: "kill" } });
    expect(parseCommand("/stop")).toEqual({ ok: true, command: { name: "stop" } });
    expect(parseCommand("/stop child-1")).toEqual({
      ok: true,
      command: { name: "stop", agent: "child-1" },
    });
    expect(parseCommand("/stop a b")).toMatchObject({
      ok: false,
      error: /^\/stop takes at most one agent/,
    });
    expect(parseCommand("/kill child-1")).toEqual({
      ok: true,
      command: { name: "kill", agent: "child-1" },
    });
    expect(parseCommand(`/send child-1 please "do" it`)).toEqual({
      ok: true,
      command: { name: "send", agent: "child-1", message: "please do it" },
    });
    expect(parseCommand("/wait 30 a b")).toEqual({
      ok: true,
      command: { name: "wait", timeoutSeconds: 30, agents: ["a", "b"] },
    });
    expect(parseCommand("/model gpt-x")).toEqual({
      ok: true,
      command: { name: "model", model: "gpt-x" },
    });
    expect(parseCommand("/quit")).toEqual({ ok: true, command: { name: "exit" } });
  });

  it("explains mistakes in one line", () => {
    const error = (text: string) => {
      const parsed = parseCommand(text);
      if (parsed.ok) throw new Error(`${text} parsed`);
      expect(parsed.error).not.toContain("\n");
      return parsed.error;
    };
    expect(error("/kil")).toBe("unknown command /kil — did you mean /kill? (/help lists commands)");
    expect(error("/frok")).toContain("did you mean /fork?");
    expect(error("/zzzzzz")).toBe("unknown command /zzzzzz (/help lists commands)");
    expect(error("/wait")).toContain("needs a timeout");
    expect(error("/wait soon")).toContain('not "soon"');
    expect(error("/wait 4000")).toContain("0-3600");
    expect(error("/send x")).toContain("needs an agent and a message");
    expect(error("/fork --name")).toContain("--name needs a value");
    expect(error("/fork --nmae x")).toContain("unknown option --nmae");
    expect(error("/reap now")).toContain("takes no arguments");
    expect(error(`/send a "open`)).toContain("unclosed double quote");
    expect(error("/model")).toContain("one model name");
  });

  it("parses /approve and /deny: the request's number is optional, a deny's reason is the rest", () => {
    const ok = (text: string) => {
      const parsed = parseCommand(text);
      return parsed.ok ? parsed.command : parsed.error;
    };
    expect(ok("/approve")).toEqual({ name: "approve", tree: false });
    expect(ok("/approve 12 --tree")).toEqual({ name: "approve", id: 12, tree: true });
    expect(ok("/approve #7")).toEqual({ name: "approve", id: 7, tree: false });
    expect(ok("/approve twelve")).toContain("request number");
    expect(ok("/deny")).toEqual({ name: "deny" });
    expect(ok("/deny 12 not on main")).toEqual({ name: "deny", id: 12, reason: "not on main" });
    expect(ok("/deny it would wipe the cache")).toEqual({
      name: "deny",
      reason: "it would wipe the cache",
    });
  });
});
