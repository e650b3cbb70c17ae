// Names that cannot pass for someone else (issue 38 §4): an agent may not be named root, human,
// person or parent however spelt (case, look-alike letters, digits for letters, brackets around
// them), nor carry an invisible character, nor differ from another agent's name in its tree only
// by invisible or look-alike characters. Each class is refused through the model's fork tool
// (real bin/warren, real Postgres, names generated per class) and through forkAgent, which the
// TUI's `/fork --name` calls, with a one-line INVALID_ARGS. And mail and wait results name the
// person by a marker (PERSON) that no name can spell.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createTree, forkAgent } from "../../src/agents/tree.js";
import { validateName } from "../../src/agents/text.js";
import { isPerson, mailText, PERSON } from "../../src/llm/framing.js";
import { LATIN_LOOKALIKE } from "../../src/text/confusables.js";
import {
  after,
  isFirst,
  lastToolResults,
  requestsOf,
  treeAgents,
  useE2E,
} from "../runtime/e2e-support.js";

const e2e = useE2E();

/** A few samples of `arb`, the same on every run. */
function some<T>(arb: fc.Arbitrary<T>, n: number, seed: number): T[] {
  return fc.sample(arb, { numRuns: n, seed });
}

const cp = (lo: number, hi: number) =>
  fc.integer({ min: lo, max: hi }).map((c) => String.fromCodePoint(c));

/** `word` with `ch` put in at a generated place. */
const inserted = (word: string, ch: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.integer({ min: 0, max: word.length }), ch)
    .map(([at, c]) => word.slice(0, at) + c + word.slice(at));

/** `word` with one letter that has a look-alike replaced by it. */
const lookalikeOf = (word: string) => {
  const byLatin = new Map<string, string[]>();
  for (const [alike, latin] of LATIN_LOOKALIKE) {
    byLatin.set(latin, [...(byLatin.get(latin) ?? []), alike]);
  }
  const places = [...word].flatMap((ch, i) => (byLatin.has(ch) ? [i] : []));
  return fc
    .constantFrom(...places)
    .chain((i) =>
      fc
        .constantFrom(...byLatin.get(word[i]!)!)
        .map((alike) => word.slice(0, i) + alike + word.slice(i + 1)),
    );
};

const INVISIBLE = fc.oneof(
  cp(0x200b, 0x200f),
  cp(0x2060, 0x2064),
  cp(0xfeff, 0xfeff),
  cp(0x202a, 0x202e),
  cp(0x2066, 0x2069),
  cp(0xe0020, 0xe007f),
  cp(0xfe00, 0xfe0f),
  cp(0x00a0, 0x00a0),
  cp(0x2000, 0x200a),
  cp(0x00ad, 0x00ad),
);

/** Refused classes: names the model tries, generated per class, and what the refusal says. */
const REFUSED: { cls: string; names: string[]; says: RegExp }[] = [
  {
    cls: "reserved, however cased",
    names: ["root", "human", "person", "parent", "Human", "ROOT", "pErSoN"],
    says: /reserved name/,
  },
  {
    cls: "reserved, look-alike letters and digits",
    names: [
      ...some(lookalikeOf("root"), 2, 1),
      ...some(lookalikeOf("human"), 2, 2),
      ...some(lookalikeOf("person"), 2, 3),
      "r00t",
      "hurnan",
      "ｈｕｍａｎ",
    ],
    says: /can pass for "(root|human|person|parent)", a reserved name/,
  },
  {
    cls: "reserved, bracketed or punctuated (the person's marker)",
    names: [PERSON, "<human>", "[root]", "h.u.m.a.n", "〈person〉"],
    says: /reserved name/,
  },
  {
    cls: "invisible characters",
    names: [
      ...some(inserted("root", INVISIBLE), 3, 4),
      ...some(inserted("worker", INVISIBLE), 3, 5),
    ],
    says: /^name must not contain invisible characters \(found \\u/,
  },
];

/** Second round: names that pass for `tests`, forked before them. */
const TWINS = [...some(lookalikeOf("tests"), 3, 6), "ｔｅｓｔｓ", "te5ts", "tes\u200bts"];

describe("agent names that could pass for someone else", () => {
  it("are refused by validateName, every generated one, and ordinary names are not", () => {
    for (const { cls, names, says } of REFUSED) {
      for (const name of names) {
        expect(() => validateName(name), `${cls}: ${JSON.stringify(name)}`).toThrow(says);
      }
    }
    // A much larger draw of the same generators.
    fc.assert(
      fc.property(
        fc.oneof(
          lookalikeOf("root"),
          lookalikeOf("human"),
          lookalikeOf("parent"),
          lookalikeOf("person"),
          inserted("tests", INVISIBLE),
        ),
        (name) => {
          expect(() => validateName(name)).toThrow(/reserved|invisible/);
        },
      ),
      { numRuns: 500, seed: 38 },
    );
    for (const ok of ["tests", "builder-2", "名前 ✓", "human-review", "rooted", "привет", "café"]) {
      expect(validateName(ok)).toBe(ok);
    }
    // The root keeps `root`, and only that spelling.
    expect(validateName("root", { root: true })).toBe("root");
    expect(() => validateName("rооt", { root: true })).toThrow(/reserved/);
    expect(() => validateName("human", { root: true })).toThrow(/reserved/);
  });

  it("are refused through the model's fork tool, one line each, and the others fork", async () => {
    const fake = e2e.fake();
    const first = ["tests", ...REFUSED.flatMap((r) => r.names)];
    const fork = (name: string) => ({
      name: "fork",
      arguments: { name, prompt: "work", context: "fresh" },
    });
    fake.script([
      { agent: "root", match: isFirst, reply: { toolCalls: first.map(fork) } },
      {
        agent: "root",
        match: after("fork"),
        reply: { toolCalls: [...TWINS, "builder"].map(fork) },
      },
      { agent: "root", match: after("fork"), reply: { text: "forked" } },
      // The children's final answers reach the root as mail (a child's text is its result).
      { agent: "root", reply: { text: "noted" }, times: Infinity },
      {
        match: (req) => !req.systemPrompt?.includes("Your name: root"),
        reply: { text: "ok" },
        times: Infinity,
      },
    ]);
    const run = await e2e.prompt("fork them", { timeout: 90 });
    expect(run.code, run.stderr).toBe(0);

    const round1 = lastToolResults(requestsOf(fake, "root")[1]!);
    expect(round1).toHaveLength(first.length);
    const errorOf = (r: { value: unknown }) =>
      (r.value as { error?: { code: string; message: string } }).error;
    expect(errorOf(round1[0]!)).toBeUndefined();
    let i = 1;
    for (const { cls, names, says } of REFUSED) {
      for (const name of names) {
        const error = errorOf(round1[i++]!);
        expect(error?.code, `${cls}: ${JSON.stringify(name)}`).toBe("INVALID_ARGS");
        expect(error?.message, JSON.stringify(name)).toMatch(says);
        expect(error?.message).not.toMatch(/\n/);
      }
    }

    const round2 = lastToolResults(requestsOf(fake, "root")[2]!);
    TWINS.forEach((name, j) => {
      const error = errorOf(round2[j]!);
      expect(error?.code, JSON.stringify(name)).toBe("INVALID_ARGS");
      expect(error?.message, JSON.stringify(name)).toMatch(
        /can pass for "tests", another agent's name in this tree|invisible characters/,
      );
      expect(error?.message).not.toMatch(/\n/);
    });
    expect(errorOf(round2[TWINS.length]!)).toBeUndefined();

    const names = (await treeAgents(e2e.db(), run.json!.tree_id)).map((a) => a.name).sort();
    expect(names).toEqual(["builder", "root", "tests"]);
  });

  it("are refused by forkAgent (the TUI's /fork --name) with a one-line INVALID_ARGS", async () => {
    const db = e2e.db();
    const root = await createTree(db, {});
    await forkAgent(db, root.id, { name: "tests", context: "fresh" });
    for (const name of ["human", "rооt", `x${"\u200b"}y`, PERSON, "tеsts"]) {
      const err = await forkAgent(db, root.id, { name, context: "fresh" }).then(
        () => undefined,
        (e: unknown) => e as { code?: string; message: string },
      );
      expect(err?.code, JSON.stringify(name)).toBe("INVALID_ARGS");
      expect(err?.message).not.toMatch(/\n/);
    }
    const names = (await treeAgents(db, root.id)).map((a) => a.name).sort();
    expect(names).toEqual(["root", "tests"]);
  });
});

describe("the person's marker", () => {
  it("frames mail from the person by a marker no agent name can spell", () => {
    expect(PERSON).toBe("⟨person⟩");
    expect(mailText("ignored", null, "hi")).toBe('<mail from="⟨person⟩">\nhi\n</mail>');
    expect(() => validateName(PERSON)).toThrow(/reserved/);
    // An agent named like the old word is refused too, and its mail carries its id.
    expect(() => validateName("human")).toThrow(/reserved/);
    expect(mailText("tests", "0123abcd-0000-4000-8000-000000000000", "hi")).toBe(
      '<mail from="tests" id="0123abcd">\nhi\n</mail>',
    );
    expect(isPerson(PERSON)).toBe(true);
    expect(isPerson(null)).toBe(true);
    expect(isPerson("0123abcd-0000-4000-8000-000000000000")).toBe(false);
  });
});
