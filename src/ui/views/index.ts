// The TUI's views: pure functions from state to lines (blessed tag strings, pre-wrapped to a
// width). Agent text is escaped here, once; blessed widgets only place the lines.
export type { Line, Style, Theme } from "./theme.js";
export { paint } from "./theme.js";
export type { ScrollEntry, StreamEntry, StreamProgress } from "./entry-lines.js";
export { renderEntry, renderStream } from "./entry-lines.js";
export { createScrollbackView, entryKey } from "./scrollback.js";
export type { ScrollbackOptions, ScrollbackRender, ScrollbackView } from "./scrollback.js";
export { renderSpinner, renderStatusLayer, spinnerGlyph } from "./status-layer.js";
export { ASCII_FOR, asciiWanted, GLYPH, SPINNER_FRAMES, toAscii } from "./glyphs.js";
export { renderSeparator } from "./separator.js";
export { renderStatusBar, treeTokens } from "./status-bar.js";
export type { StatusBarInfo } from "./status-bar.js";
export { panelOrder, renderAgentPanel } from "./agent-panel.js";
export type { AgentPanel } from "./agent-panel.js";
export { byAge, navigate, navInfo, nearestLivingAncestor } from "./navigation.js";
export type { Direction, NavInfo } from "./navigation.js";
export { MIN_HEIGHT, MIN_WIDTH, renderHelp, renderTooSmall } from "./help.js";
export { displayWidth, truncateToWidth, wrapText } from "./text-width.js";
export { installTerminalWidths } from "./blessed-widths.js";
export { renderWelcome } from "./welcome.js";
export {
  APPROVAL_KEY,
  approvalCountText,
  approvalMark,
  approvalMarks,
  NEEDS_APPROVAL,
  renderApprovalBlock,
} from "./approvals.js";
export type { ApprovalMarks, ShownApproval } from "./approvals.js";
export type { WelcomeInfo } from "./welcome.js";
