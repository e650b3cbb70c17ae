// What a sandboxed command runs under: the sandbox's settings from the config and the defaults.
import type { ShellEnvConfig } from "./env.js";
import type { NetworkAsker } from "./network/gate.js";
import type { NetworkPolicy } from "./network/rules.js";

/** Whether `bash` runs in the OS sandbox (SPEC §3): where it works, always, or never. */
export type SandboxMode = "auto" | "on" | "off";

export interface SandboxConfig {
  /** auto: bubblewrap where it works, else unconfined with one line saying so; on: required. */
  mode: SandboxMode;
  /**
   * Network inside the sandbox (default true): false adds `--unshare-net`; a gate (a list of
   * allow/deny rule sets, network/rules.ts) adds it too, and the command reaches only warren's proxy.
   */
  network: NetworkPolicy;
  /** Absolute paths writable besides the working directory and /tmp. */
  writable: string[];
  /** The bwrap binary (WARREN_BWRAP; default: `bwrap` on PATH). */
  bwrap: string;
}

export const DEFAULT_SANDBOX: SandboxConfig = {
  mode: "auto",
  network: true,
  writable: [],
  bwrap: "bwrap",
};

/** How a command is run: what the tool context carries (from the config; see shellSettingsOf). */
export interface ShellSettings {
  sandbox: SandboxConfig;
  env: ShellEnvConfig;
  /** The config file in force, hidden besides the default location. */
  configPath?: string;
  /** Under a network gate: who asks a person about an unlisted host (none: refused). */
  networkAsk?: NetworkAsker;
  /**
   * A directory of the command's own, made if missing and writable inside even where it lies under
   * a hidden path (an MCP server's state, under warren's home).
   */
  stateDir?: string;
}

export const INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";
