// The work tools every agent may use on its working directory, alphabetised as the model sees them.
import { bashTool } from "./bash.js";
import { editFileTool } from "./edit-file.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { readFileTool } from "./read-file.js";
import type { Tool } from "./tool.js";
import { writeFileTool } from "./write-file.js";

export const workTools: Tool[] = [
  bashTool,
  editFileTool,
  globTool,
  grepTool,
  readFileTool,
  writeFileTool,
];
