// The whole schema in one place for drizzle-kit and for typed queries; each table lives with its feature.
export * from "../agents/agents.sql.js";
export * from "../agents/events.sql.js";
export * from "../mail/mail.sql.js";
export * from "../mail/waits.sql.js";
export * from "../feed/streams.sql.js";
export * from "../feed/watchers.sql.js";
export * from "../approvals/approvals.sql.js";
export * from "../tasks/tasks.sql.js";
export * from "../mcp/mcp.sql.js";
export * from "../runtime/model-cap.sql.js";
export * from "../agents/checkpoints.sql.js";
