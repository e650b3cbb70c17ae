// The skill tool: the model loads a skill's instructions (and learns its folder's files) by name,
// or reads one of those files. The system prompt lists only names and descriptions
// (skills/skills.ts skillsPromptBlock); a body reaches the context only when used.
import fs from "node:fs";
import path from "node:path";
import { skillBody, skillFiles, skillsFor } from "../skills/skills.js";
import { checkArgs, objectSchema } from "./args.js";
import { fail, ok, type Tool } from "./tool.js";

const MAX_FILE_BYTES = 256 * 1024;

const parameters = objectSchema(
  {
    name: { type: "string", minLength: 1, description: "The skill's name, as listed." },
    file: {
      type: "string",
      minLength: 1,
      description: "A file of the skill's folder (relative, as listed) to read instead.",
    },
  },
  ["name"],
);

interface SkillArgs {
  name: string;
  file?: string;
}

export const skillTool: Tool = {
  name: "skill",
  description:
    "Load a skill listed in your instructions: returns its instructions and the files of its " +
    "folder. With `file`, returns that file of the skill's folder instead.",
  parameters,
  run(args, ctx) {
    const checked = checkArgs<SkillArgs>(parameters, args);
    if (!checked.ok) return Promise.resolve(checked);
    const { name, file } = checked.value;
    const offered = skillsFor(ctx.cwd).skills.filter((s) => s.modelInvocable);
    const skill = offered.find((s) => s.name === name);
    if (!skill) {
      const names = offered.map((s) => s.name).join(", ") || "none";
      return Promise.resolve(fail("INVALID_ARGS", `no skill "${name}" (skills: ${names})`));
    }
    try {
      if (file === undefined) {
        return Promise.resolve(
          ok({ name: skill.name, instructions: skillBody(skill), files: skillFiles(skill) }),
        );
      }
      // Only the skill's own files: a path that leaves its folder (.., a link out) is refused.
      const root = fs.realpathSync(skill.dir);
      const real = fs.realpathSync(path.resolve(skill.dir, file));
      const rel = path.relative(root, real);
      if (rel.startsWith("..") || path.isAbsolute(rel)) {
        return Promise.resolve(fail("NOT_ALLOWED", `${file} is not inside the skill's folder`));
      }
      const content = fs.readFileSync(real);
      const text =
        content.length > MAX_FILE_BYTES
          ? `${content.subarray(0, MAX_FILE_BYTES).toString("utf8")}\n[cut at ${MAX_FILE_BYTES} bytes]`
          : content.toString("utf8");
      return Promise.resolve(ok({ name: skill.name, file: rel, content: text }));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "error";
      return Promise.resolve(fail("INVALID_ARGS", `cannot read ${file ?? "SKILL.md"}: ${code}`));
    }
  },
};

/** Whether an agent working in `cwd` has any skill the model may use (else no skill tool). */
export function hasSkills(cwd: string): boolean {
  return skillsFor(cwd).skills.some((s) => s.modelInvocable);
}
