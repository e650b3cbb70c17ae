// Tab in the input: completes a command name, or a model name after `/model ` from the server's
// list; several matches are offered as a hint.
import { completeCommand } from "./commands.js";

export interface Completion {
  /** The new input text, when it changes. */
  text?: string;
  /** Shown briefly in the status bar (the candidates, or why there are none). */
  hint?: string;
}

export async function completeInput(
  text: string,
  modelNames: () => Promise<string[]>,
): Promise<Completion> {
  const model = /^\/model\s+(\S*)$/.exec(text);
  if (model) {
    const typed = model[1]!;
    const names = (await modelNames()).filter((n) => n.startsWith(typed));
    if (names.length === 0) return { hint: "no matching models (the server lists none)" };
    if (names.length === 1) return { text: `/model ${names[0]}` };
    const common = commonPrefix(names);
    if (common.length > typed.length) return { text: `/model ${common}` };
    return { hint: names.slice(0, 8).join("  ") };
  }
  const command = /^\/(\S*)$/.exec(text);
  if (!command) return {};
  const names = completeCommand(command[1]!);
  if (names.length === 1) return { text: `/${names[0]} ` };
  if (names.length > 1) return { hint: names.map((n) => `/${n}`).join("  ") };
  return {};
}

function commonPrefix(words: string[]): string {
  let prefix = words[0] ?? "";
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
