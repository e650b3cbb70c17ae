// Tab in the input: completes a command name (the built-ins of the command table and the
// person's own, whose argument hint is shown), or a model name after `/model ` from the server's
// list; several matches are offered as a hint.
import { completeCommand } from "./commands.js";

/** A person's command as completion offers it: its name and how it is typed (`/review [area]`). */
export interface OwnCommand {
  name: string;
  usage: string;
  help: string;
}

export interface Completion {
  /** The new input text, when it changes. */
  text?: string;
  /** Shown briefly in the status bar (the candidates, or why there are none). */
  hint?: string;
}

export async function completeInput(
  text: string,
  modelNames: () => Promise<string[]>,
  own: readonly OwnCommand[] = [],
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
  const names = completeCommand(
    command[1]!,
    own.map((c) => c.name),
  );
  if (names.length === 1) {
    const mine = own.find((c) => c.name === names[0]);
    // The person's command: its argument hint and description, as Claude Code shows them.
    return mine
      ? { text: `/${mine.name} `, hint: `${mine.usage} — ${mine.help}` }
      : { text: `/${names[0]} ` };
  }
  if (names.length > 1) return { hint: names.map((n) => `/${n}`).join("  ") };
  return {};
}

function commonPrefix(words: string[]): string {
  let prefix = words[0] ?? "";
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
