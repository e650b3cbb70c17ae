// A result no view knows (an MCP server's tool, a task tool): its JSON made compact (one line,
// no indentation), escaped, and cut to a few rows; text that is not JSON as it is.
import { LABEL, leadBlock, type ResultView } from "./common.js";

export const fallbackResult: ResultView = ({ value, content, width }) => {
  const body = value ? (JSON.stringify(value) ?? content) : content.replace(/\s+$/, "");
  return leadBlock(body || "(no output)", body ? undefined : LABEL, width);
};
