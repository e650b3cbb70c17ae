// The small closed settings an agent's row stores (agents.caps), below the config and the tools.

/** How far the file tools reach: the agent's working directory only, or anywhere. */
export type FileAccess = "cwd" | "any";

/** Whether `bash` runs in the OS sandbox (SPEC §3): where it works, always, or never. */
export type SandboxMode = "auto" | "on" | "off";
