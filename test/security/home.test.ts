// Started in $HOME, warren's secrets stay hidden however the paths are walked (issue 37, item 4):
// every directory between the working directory and a hidden path is a read-only mount point, so
// renaming one away, linking to one (symbolically or hard) or writing a new config there reveals
// nothing and writes nothing. And the tmpfs that hides warren's home is part of a warm sandbox's
// leftover check: what one call writes there, the next call does not see.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { probeBwrap } from "../../src/sandbox/launch.js";
import { closeWarmSandboxes } from "../../src/sandbox/warm.js";
import {
  bash,
  leaked,
  makeFixture,
  output,
  SECRET,
  settingsFrom,
  type Fixture,
} from "./fixture.js";

const hasBwrap = (await probeBwrap("bwrap")).ok;

describe.skipIf(!hasBwrap)("warren started in $HOME", () => {
  let fx: Fixture;
  beforeEach(() => {
    fx = makeFixture({ sandbox: "on" });
  });
  afterEach(() => {
    closeWarmSandboxes();
    fx.cleanup();
  });

  const run = async (command: string) =>
    output(await bash(`${command}; echo done`, fx.home, settingsFrom()));

  /** Whatever the command did, the hidden paths are where they were, unchanged. */
  function untouched(): void {
    expect(readFileSync(fx.configFile, "utf8")).toContain(SECRET.configKey);
    expect(readFileSync(fx.configFile, "utf8")).not.toContain("off");
    expect(existsSync(path.join(fx.warrenHome, "postgres.json"))).toBe(true);
    expect(existsSync(path.join(fx.home, ".pgpass"))).toBe(true);
    for (const moved of [".l2", ".local/s2", ".config-x", ".config/w2", "p2"]) {
      expect(existsSync(path.join(fx.home, moved)), moved).toBe(false);
    }
    // mv falls back to copying a mount point it cannot rename: the copy is of the empty tmpfs.
    expect(existsSync(path.join(fx.home, "w2", "postgres.json"))).toBe(false);
  }

  const renames: [string, string][] = [
    ["~/.local", "mv ~/.local ~/.l2; cat ~/.l2/share/warren/postgres.json"],
    ["~/.local/share", "mv ~/.local/share ~/.local/s2; cat ~/.local/s2/warren/postgres.json"],
    ["~/.local/share/warren", "mv ~/.local/share/warren ~/w2; cat ~/w2/postgres.json"],
    ["~/.config", "mv ~/.config ~/.config-x; cat ~/.config-x/warren/config.json"],
    ["~/.config/warren", "mv ~/.config/warren ~/.config/w2; cat ~/.config/w2/config.json"],
    ["~/.pgpass", "mv ~/.pgpass ~/p2; cat ~/p2"],
  ];

  it.each(renames)("renaming %s reveals nothing", async (_, command) => {
    const result = await run(command);
    expect(result.output).toContain("done");
    expect(leaked(result.output)).toEqual([]);
    untouched();
  });

  it("symbolic and hard links reveal nothing", async () => {
    const result = await run(
      "ln -s ~/.local/share/warren x; cat x/postgres.json; ln -s ~/.config/warren/config.json c; cat c; " +
        "ln ~/.local/share/warren/postgres.json h; cat h; ln ~/.pgpass p; cat p; " +
        "ln ~/.config/warren/config.json k; cat k",
    );
    expect(result.output).toContain("done");
    expect(leaked(result.output)).toEqual([]);
    untouched();
  });

  it("no new config can be written where the next start would read it", async () => {
    const result = await run(
      `echo '{"sandbox":"off"}' > ~/.config/warren/config.json; ` +
        `echo '{"sandbox":"off"}' > ~/.config/warren/new.json; ` +
        `mkdir -p ~/.config/other && echo off > ~/.config/other/x`,
    );
    expect(result.output).toContain("done");
    untouched();
    expect(existsSync(path.join(fx.home, ".config", "warren", "new.json"))).toBe(false);
    const removed = await run("rm -rf ~/.config ~/.local");
    expect(removed.output).toContain("done");
    untouched();
  });

  it("a file written into the hidden home does not reach the next call in the same sandbox", async () => {
    const first = await run(
      "echo planted > ~/.local/share/warren/note; cat ~/.local/share/warren/note",
    );
    expect(first.output).toContain("planted");
    const second = await run("cat ~/.local/share/warren/note 2>&1; ls -A ~/.local/share/warren");
    expect(second.output).not.toContain("planted");
    expect(existsSync(path.join(fx.warrenHome, "note"))).toBe(false);
  });
});
