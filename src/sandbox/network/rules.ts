// The network gate's rules (SPEC §3, "The network goes through one gate"): what `sandbox_network`
// may say (true, false, or {"allow": [...], "deny": [...]}), how a profile or agent file narrows it,
// and the pure decisions the proxy makes on each request: by name first, then by every address the
// name resolved to (loopback and private addresses only when listed explicitly). No I/O here.
import net from "node:net";

/** What the config, a profile or an agent file says. */
export type NetworkSetting = boolean | NetworkRules;

/** Host entries: `host`, `*.domain`, `*`, an IP address, each with an optional `:port`. */
export interface NetworkRules {
  allow: string[];
  deny: string[];
}

/**
 * An agent's effective network: true (everything), false (nothing), or a gate where a request
 * must pass every one of these rule sets (the config's, then each narrowing profile's), never empty.
 */
export type NetworkPolicy = boolean | NetworkRules[];

export const NETWORK_USAGE =
  'sandbox_network must be true, false or {"allow": ["host", "*.domain", "host:port", …], "deny": […]}';

/** A host entry, parsed. */
interface HostPattern {
  /** "*" (any host), "*.": the subdomains of `host`, "=": exactly `host` (a name or an address). */
  kind: "*" | "*." | "=";
  host: string;
  /** undefined: any port. */
  port?: number;
  /** The entry as written, for messages. */
  text: string;
}

/**
 * `value` as a NetworkSetting, or an Error with one line saying what is wrong (`name`: where it
 * was found, e.g. "sandbox_network" or "profiles.x.sandbox_network").
 */
export function parseNetworkSetting(value: unknown, name = "sandbox_network"): NetworkSetting {
  if (typeof value === "boolean") return value;
  const usage = NETWORK_USAGE.replace("sandbox_network", name);
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(usage);
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => k !== "allow" && k !== "deny");
  if (unknown !== undefined) throw new Error(`${usage}; unknown field "${unknown}"`);
  const list = (key: "allow" | "deny"): string[] => {
    const entries = fields[key] ?? [];
    if (!Array.isArray(entries)) throw new Error(`${name}.${key} must be a list of hosts`);
    return entries.map((entry: unknown) => {
      if (typeof entry !== "string") {
        throw new Error(`${name}.${key} must be a list of hosts, got ${JSON.stringify(entry)}`);
      }
      const problem = patternProblem(entry);
      if (problem) throw new Error(`${name}.${key}: ${JSON.stringify(entry)} ${problem}`);
      return entry.trim();
    });
  };
  return { allow: list("allow"), deny: list("deny") };
}

/** The effective network of a setting alone (the config's). */
export function networkPolicyOf(setting: NetworkSetting): NetworkPolicy {
  return typeof setting === "boolean" ? setting : [setting];
}

/**
 * `from` narrowed by `asked` (a profile's or agent file's setting): never wider. false is narrower
 * than any gate, a gate narrower than true; two gates both apply.
 */
export function narrowNetwork(
  from: NetworkPolicy,
  asked: NetworkSetting | undefined,
): NetworkPolicy {
  if (asked === undefined || asked === true || from === false) return from;
  if (asked === false) return false;
  return from === true ? [asked] : [...from, asked];
}

/** Whether a command under this policy runs in its own network namespace (false and gates). */
export function unsharesNetwork(policy: NetworkPolicy): boolean {
  return policy !== true;
}

/** The rule sets of a gate, or undefined for true and false. */
export function gateOf(policy: NetworkPolicy): NetworkRules[] | undefined {
  return Array.isArray(policy) ? policy : undefined;
}

/** How a policy reads in one line (the first screen, doctor). */
export function describeNetwork(policy: NetworkPolicy): string {
  if (policy === true) return "network on";
  if (policy === false) return "network off";
  const allow = policy.map((r) => r.allow.join(", ") || "nothing").join(" ∩ ");
  return `network through warren's proxy (allow: ${allow})`;
}

/** `askable`: refused only for not being listed (a person may allow it), not by a deny entry. */
export type Verdict = { ok: true } | { ok: false; reason: string; askable?: boolean };

/**
 * The first check, on the name (or address) as asked: every rule set must list it in `allow` and
 * none in `deny`. `host` is normalized (normalizeHost).
 */
export function decideHost(gate: NetworkRules[], host: string, port: number): Verdict {
  const target = formatTarget(host, port);
  for (const rules of gate) {
    const denied = rules.deny.map(parsePattern).find((p) => matches(p, host, port));
    if (denied) return { ok: false, reason: `${target} is denied by "${denied.text}"` };
    if (!rules.allow.map(parsePattern).some((p) => matches(p, host, port))) {
      return { ok: false, reason: `${target} is not in the allow list`, askable: true };
    }
  }
  return { ok: true };
}

/**
 * The second check, on an address `host` resolved to (or `host` itself when it is one): refused
 * when a deny entry names the address, and, for a loopback, private, link-local or otherwise
 * non-public address, unless every rule set lists the host or the address explicitly (not by a
 * wildcard) for this port.
 */
export function decideAddress(
  gate: NetworkRules[],
  host: string,
  port: number,
  address: string,
): Verdict {
  const ip = normalizeAddress(address);
  const target = formatTarget(host, port);
  for (const rules of gate) {
    const denied = rules.deny.map(parsePattern).find((p) => matches(p, ip, port));
    if (denied)
      return { ok: false, reason: `${target} resolves to ${ip}, denied by "${denied.text}"` };
  }
  if (!isNonPublic(ip)) return { ok: true };
  const explicit = (rules: NetworkRules) =>
    rules.allow
      .map(parsePattern)
      .some((p) => p.kind === "=" && (matches(p, host, port) || matches(p, ip, port)));
  if (gate.every(explicit)) return { ok: true };
  const which = ip === host ? "is" : `resolves to ${ip},`;
  return {
    ok: false,
    reason: `${target} ${which} a loopback or private address, reached only when listed explicitly (not by a wildcard)`,
  };
}

/**
 * A host as the proxy was asked for it, in one form: lowercase, punycode, no trailing dot, IPv4
 * in dotted decimal (`0x7f.1` is 127.0.0.1), IPv6 canonical without brackets; undefined when it
 * is not a host name at all.
 */
export function normalizeHost(raw: string): string | undefined {
  const bare = raw.trim().replace(/^\[(.*)\]$/, "$1");
  if (bare === "") return undefined;
  if (net.isIPv6(bare)) return normalizeAddress(bare);
  let host: string;
  try {
    host = new URL(`http://${bare}/`).hostname;
  } catch {
    return undefined;
  }
  if (host.startsWith("[")) return normalizeAddress(host.slice(1, -1));
  host = host.replace(/\.$/, "");
  return host === "" ? undefined : host;
}

/** An IP address in one form: IPv4 dotted decimal (also for IPv4-mapped IPv6), IPv6 canonical. */
export function normalizeAddress(address: string): string {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  if (!net.isIPv6(bare)) return bare;
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) return embeddedV4(parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16));
  return canonical;
}

function embeddedV4(high: number, low: number): string {
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

const NON_PUBLIC = new net.BlockList();
for (const [net4, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NON_PUBLIC.addSubnet(net4, prefix, "ipv4");
}
for (const [net6, prefix] of [
  ["::", 96], // unspecified, loopback, IPv4-compatible
  ["100::", 64], // discard
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net6, prefix, "ipv6");
}

/** Whether an address is loopback, private, link-local, multicast, reserved or unspecified. */
export function isNonPublic(address: string): boolean {
  const ip = normalizeAddress(address);
  if (net.isIPv4(ip)) return NON_PUBLIC.check(ip, "ipv4");
  if (!net.isIPv6(ip)) return true;
  // NAT64 and 6to4 carry an IPv4 address: judged by it.
  const full = expandV6(ip);
  if (full[0] === 0x64 && full[1] === 0xff9b && full.slice(2, 6).every((h) => h === 0)) {
    return isNonPublic(embeddedV4(full[6]!, full[7]!));
  }
  if (full[0] === 0x2002) return isNonPublic(embeddedV4(full[1]!, full[2]!));
  return NON_PUBLIC.check(ip, "ipv6");
}

function expandV6(ip: string): number[] {
  const [head, tail] = ip.includes("::") ? ip.split("::") : [ip, undefined];
  const parts = (s: string | undefined) => (s ? s.split(":").map((h) => parseInt(h, 16)) : []);
  const a = parts(head);
  const b = parts(tail);
  return [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
}

function formatTarget(host: string, port: number): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** Why `entry` is not a host entry (a phrase), or undefined when it is one. */
function patternProblem(entry: string): string | undefined {
  const text = entry.trim();
  if (text.includes("://") || text.includes("/")) {
    return "is not a host: write the host alone (e.g. registry.npmjs.org), with :port if needed";
  }
  const split = splitPort(text);
  if (!split) return "has an invalid port (1-65535)";
  const { host } = split;
  if (host === "*") return undefined;
  const name = host.startsWith("*.") ? host.slice(2) : host;
  if (name.includes("*")) return 'may use "*" only as a whole first label ("*.example.com")';
  if (!normalizeHost(name) || !/^[a-z0-9._:-]+$/i.test(name.replace(/^\[(.*)\]$/, "$1"))) {
    return "is not a host name or IP address";
  }
  return undefined;
}

function splitPort(text: string): { host: string; port?: number } | undefined {
  let host = text;
  let port: string | undefined;
  const bracketed = /^(\[[^\]]+\])(?::(.*))?$/.exec(text);
  if (bracketed) [host, port] = [bracketed[1]!, bracketed[2]];
  else if (net.isIPv6(text)) host = text;
  else {
    const at = text.lastIndexOf(":");
    if (at >= 0) [host, port] = [text.slice(0, at), text.slice(at + 1)];
  }
  if (port === undefined) return { host };
  const n = Number(port);
  if (!/^\d+$/.test(port) || n < 1 || n > 65535) return undefined;
  return { host, port: n };
}

const parsed = new Map<string, HostPattern>();

function parsePattern(entry: string): HostPattern {
  let pattern = parsed.get(entry);
  if (pattern) return pattern;
  const { host, port } = splitPort(entry.trim()) ?? { host: entry.trim() };
  if (host === "*") pattern = { kind: "*", host: "", port, text: entry };
  else if (host.startsWith("*.")) {
    pattern = { kind: "*.", host: normalizeHost(host.slice(2)) ?? host, port, text: entry };
  } else pattern = { kind: "=", host: normalizeHost(host) ?? host, port, text: entry };
  parsed.set(entry, pattern);
  return pattern;
}

function matches(pattern: HostPattern, host: string, port: number): boolean {
  if (pattern.port !== undefined && pattern.port !== port) return false;
  if (pattern.kind === "*") return true;
  if (pattern.kind === "*.") return host.endsWith(`.${pattern.host}`);
  return host === pattern.host;
}
