// The subcommands: each one's name, summary and help, which the top-level help and `--help` show
// without loading anything, and a loader that imports the command (and what it needs) to run it.
import { SEARCH_LIMIT } from "../search/limit.js";
import type { Command } from "./command.js";

// The option lines most commands share, in their 12 columns.
const TREE_AGENT =
  "  --tree ID   resolve AGENT within this tree (a root's id or a unique prefix of it)";
const HELP = "  -h, --help  show this help";
/** The options of a command on one agent that takes no other. */
const AGENT_OPTIONS = `Options:\n${TREE_AGENT}\n${HELP}`;

export const COMMANDS: Command[] = [
  {
    name: "ls",
    summary: "list the agents of a tree with state and counters",
    usage: `Usage: warren ls [--tree ID] [--all] [--json] [--totals]

List the agents of a tree (default: the most recently active one), indented as a tree,
with state, turns, tool calls, tokens in/out, age and last activity, then the tree's totals
(input tokens with those served from the server's cache, output tokens with those spent on
reasoning). Totals count every agent the tree has had, reaped ones included. With a price for
the model in the config's "prices", the cost in USD per agent and for the tree as well.

Options:
  --tree ID   the tree: a root's id or a unique prefix of it (4+ characters)
  --all       include reaped agents
  --totals    print only the tree's totals
  --json      print a JSON array of agent objects (with --totals: one totals object);
              each has cost_usd (null when its model has no price)
${HELP}`,
    load: () => import("./ls.js").then((m) => m.runLs),
  },
  {
    name: "log",
    summary: "show an agent's transcript",
    usage: `Usage: warren log AGENT [--tree ID] [--full] [--json]

Show an agent's transcript. AGENT is a name, full id or unique id prefix (4+ characters)
within the tree (default: the most recent one), or a full id or unique prefix in any tree.

Options:
${TREE_AGENT}
  --full      do not shorten long tool results and arguments
  --json      print a JSON array of event objects
${HELP}`,
    load: () => import("./log.js").then((m) => m.runLog),
  },
  {
    name: "search",
    summary: "search every agent's transcript in a tree",
    usage: `Usage: warren search TEXT [--tree ID] [--json]

Search every agent's transcript in a tree, dead ones included; newest first, at most
${SEARCH_LIMIT} events. Words are matched whole (full-text, any case; "a phrase", -word and
or work as in a web search); a query shorter than 3 characters or without letters or digits,
or one no word matches, is looked up as a plain substring. Several words may be given
unquoted.

Options:
  --tree ID   search this tree (a root's id or a unique prefix of it; default: the most recent)
  --json      print a JSON array of {agent_id, agent_name, event_id, kind, created_at, line}
${HELP}`,
    load: () => import("./search.js").then((m) => m.runSearch),
  },
  {
    name: "send",
    summary: "send mail to an agent from you (shown to agents as ⟨person⟩)",
    usage: `Usage: warren send AGENT MESSAGE... [--tree ID]

Send mail to an agent from you; agents see the sender as "⟨person⟩", a name no agent
can have. An idle agent wakes
and starts a turn with it. Several MESSAGE words are joined with spaces; "-" reads
the message from stdin. AGENT is resolved as for \`warren log\`.

${AGENT_OPTIONS}`,
    load: () => import("./send.js").then((m) => m.runSend),
  },
  {
    name: "tasks",
    summary: "show the task board of a tree",
    usage: `Usage: warren tasks [--tree ID] [--json]

Show a tree's task board (default: the most recent tree), oldest task first: each task's
state (pending, claimed, done, failed, or blocked behind a failed dependency), its id, title,
who holds or finished it, and its result or the tasks it waits for. Agents fill the board with
task_add and work it with task_claim and task_done; the TUI's /tasks shows it live.

Options:
  --tree ID   the tree: a root's id or a unique prefix of it (4+ characters)
  --json      print {tree_id, tasks: [{task_id, title, state, claimed_by, claimed_by_name,
              result, depends_on}]}
${HELP}`,
    load: () => import("./tasks.js").then((m) => m.runTasks),
  },
  {
    name: "approvals",
    summary: "list tool calls waiting for your approval",
    usage: `Usage: warren approvals [--tree ID | --all] [--json]

List the open approval requests of a tree (default: the most recent), oldest first:
id, agent, tool and what it would run. Answer with \`warren approve ID\` or
\`warren deny ID\`, or in any TUI on the tree.

Options:
  --tree ID   the tree: a root's id or a unique prefix of it
  --all       every tree
  --json      one JSON array
${HELP}`,
    load: () => import("./approvals.js").then((m) => m.runApprovals),
  },
  {
    name: "approve",
    summary: "allow a tool call waiting for approval",
    usage: `Usage: warren approve ID [--tree-wide]

Allow the tool call of approval request ID (see \`warren approvals\`); it runs at once.

Options:
  --tree-wide  also allow calls like it for the whole tree (e.g. \`git *\` for bash)
  -h, --help   show this help`,
    load: () => import("./approvals.js").then((m) => m.runApprove),
  },
  {
    name: "deny",
    summary: "deny a tool call waiting for approval",
    usage: `Usage: warren deny ID [--reason TEXT]

Deny the tool call of approval request ID; the model is told, with your reason.

Options:
  --reason TEXT  why (the model reads it)
  -h, --help     show this help`,
    load: () => import("./approvals.js").then((m) => m.runDeny),
  },
  {
    name: "stop",
    summary: "interrupt an agent and all its descendants (they stay alive)",
    usage: `Usage: warren stop AGENT [--tree ID]

Interrupt the turns of an agent and every descendant: their model streams and tools stop,
each records that it was interrupted, and all stay alive (idle), taking mail afterwards.
Agents with no turn running are left as they are. To end agents, use \`warren kill\`.
AGENT is resolved as for \`warren log\`.

${AGENT_OPTIONS}`,
    load: () => import("./stop.js").then((m) => m.runStop),
  },
  {
    name: "kill",
    summary: "kill an agent and all its descendants",
    usage: `Usage: warren kill AGENT [--tree ID]

Kill an agent and every descendant: their model streams and tools stop at once and
they stay visible (dead) until reaped. The root agent cannot be killed.
AGENT is resolved as for \`warren log\`.

${AGENT_OPTIONS}`,
    load: () => import("./kill.js").then((m) => m.runKill),
  },
  {
    name: "diff",
    summary: "show a worktree child's change against its base",
    usage: `Usage: warren diff AGENT [--tree ID]

Show what an agent forked with isolation "worktree" changed against the commit it started
from: a diffstat, then the patch; uncommitted and untracked files included. AGENT is
resolved as for \`warren log\`.

${AGENT_OPTIONS}`,
    load: () => import("./worktree.js").then((m) => m.runDiff),
  },
  {
    name: "merge",
    summary: "merge a worktree child's branch into its parent's working tree",
    usage: `Usage: warren merge AGENT [--tree ID]

Commit what an agent forked with isolation "worktree" left uncommitted on its branch
(warren/NAME-ID8), then merge the branch (--no-ff) into the working tree its parent works in.
A working tree with uncommitted changes is refused; a conflict aborts the merge, names the
files and changes nothing (the branch keeps the work). Once a dead agent's branch is merged,
its worktree and branch are removed. Refused while the agent is running.

${AGENT_OPTIONS}`,
    load: () => import("./worktree.js").then((m) => m.runMerge),
  },
  {
    name: "discard",
    summary: "remove a worktree child's worktree and branch, with its work",
    usage: `Usage: warren discard AGENT --yes [--tree ID]

Remove the worktree and branch of an agent forked with isolation "worktree", and with them
everything it changed. Asks for --yes. Refused while the agent is running or waiting.

Options:
  --yes, -y   confirm: the work is lost
${TREE_AGENT}
${HELP}`,
    load: () => import("./worktree.js").then((m) => m.runDiscard),
  },
  {
    name: "rewind",
    summary: "list an agent's turns, or undo a turn and everything after it",
    usage: `Usage: warren rewind AGENT --list [--json] [--tree ID]
       warren rewind AGENT --to N [--files-only | --conversation-only] [--yes] [--tree ID]

--list shows the agent's turns: number, when, who started it (the person or mail), the files
it changed, tokens in/out, the start of its message; rewound turns are marked.

--to N undoes turn N (as listed) and every turn after it: the files go back to the checkpoint
taken before turn N (files created since are removed, deleted ones come back; ignored files
and files the turns never touched are left alone), and the conversation goes back to before
it (the later events stay in the transcript, marked rewound, out of every model request).
Mail already sent and children already forked are not undone: they are listed. Without
--yes it only says what it would do. A running agent is interrupted first (with --yes).
Running it again after a crash finishes it. See docs/rewind.md.

Options:
  --list                list the turns
  --json                with --list: a JSON array of turns
  --to N                the turn to undo, with everything after it
  --files-only          restore the files only
  --conversation-only   rewind the conversation only
  --yes, -y             do it (interrupting a running agent first)
  --tree ID             resolve AGENT within this tree (a root's id or a unique prefix of it)
  -h, --help            show this help`,
    load: () => import("./rewind.js").then((m) => m.runRewind),
  },
  {
    name: "fork",
    summary: "branch an agent's conversation from before one of its turns",
    usage: `Usage: warren fork AGENT --at N [--worktree] [--name NAME] [--tree ID] [PROMPT]

Make a new sibling of AGENT (for a root: its child) whose conversation is AGENT's before turn N
(numbered as \`warren rewind AGENT --list\` shows). With --worktree, its files are the
checkpoint taken before turn N, in a git worktree of its own (see \`warren diff|merge\`). With
PROMPT it runs at once; without, it waits for its first message (\`warren send\`).

Options:
  --at N        the turn to branch before
  --worktree    work in a git worktree of its own, on turn N's files
  --name NAME   its name (default: AGENT-atN)
  --tree ID     resolve AGENT within this tree (a root's id or a unique prefix of it)
  -h, --help    show this help`,
    load: () => import("./fork.js").then((m) => m.runFork),
  },
  {
    name: "reap",
    summary: "remove a tree's dead agents from navigation",
    usage: `Usage: warren reap [--tree ID]

Remove every dead agent of a tree (default: the most recent) from navigation and
from \`warren ls\`. Their transcripts stay in the database (\`ls --all\`, \`export\`).

Options:
  --tree ID   the tree: a root's id or a unique prefix of it
${HELP}`,
    load: () => import("./reap.js").then((m) => m.runReap),
  },
  {
    name: "export",
    summary: "export a tree with every transcript (Markdown or JSON)",
    usage: `Usage: warren export [TREE] [--format md|json] [-o FILE]

Export every agent of a tree (reaped ones included) with its whole transcript.
TREE is a root's id or a unique prefix of it (default: the most recent tree).

Options:
  --format md|json  Markdown, a heading per agent in tree order (default), or JSON:
                    {"tree_id", "agents": [{...agent, "events": [...]}]}
  -o, --output FILE write to FILE instead of stdout
  -h, --help        show this help`,
    load: () => import("./export.js").then((m) => m.runExport),
  },
  {
    name: "worker",
    summary: "run agents headlessly (add capacity to a shared database)",
    usage: `Usage: warren worker [--concurrency N] [--threads N]

Run agents' turns in this process until interrupted (Ctrl+C or SIGTERM stop it
gracefully). Workers on other machines pointed at the same DATABASE_URL add capacity.

Options:
  --concurrency N  agents this process runs at once (default: config "concurrency", 256)
  --threads N      worker threads (default: config "worker_threads"; 2, or 1 on 2 cores)
  -h, --help       show this help`,
    exitWhenDone: true,
    load: () => import("./worker.js").then((m) => m.runWorker),
  },
  {
    name: "mcp",
    summary: "MCP servers: list (servers, state, tools) | allow (a project's .mcp.json)",
    usage: `Usage: warren mcp list [--cached] [--json]
       warren mcp allow [FILE]

list: each MCP server of the config's "mcp_servers" and of the project's .mcp.json: its
transport, command or URL, its state and its tools (as agents see them:
mcp__SERVER__TOOL). Each server is started (or reached), asked for its tools and stopped,
within its startup timeout; the lists are stored for every warren process (agents are
offered the stored lists, refreshed in the background when a process starts). A
.mcp.json's servers show as "not allowed" until the file is allowed.

allow: shows the servers a .mcp.json (FILE, default: the nearest from this directory up
to the repository root) would start, and allows that file as it is now; a changed file
must be allowed again. Then fetches their tools as list does.

Options:
  --cached    list: show the stored lists without asking the servers
  --json      list: print a JSON array of {name, transport, target, state, error, fetched_at, tools}
${HELP}`,
    load: () => import("./mcp.js").then((m) => m.runMcp),
  },
  {
    name: "trust",
    summary:
      "trust a project's own settings, skill and command files and .mcp.json (or --list, --revoke)",
    usage: `Usage: warren trust [DIR]
       warren trust --list
       warren trust --revoke [DIR]

A cloned repository is not trusted: what its own files could run or widen waits until you
trust them: .claude/settings.json and .claude/settings.local.json (their permissions.allow
rules, env and hooks; their deny and ask rules apply at once), its skill and command files
(.claude/skills, .agents/skills, .warren/skills, .claude/commands, .warren/commands) and
.mcp.json (its servers). trust shows what each file of DIR (default: this directory; files are
looked for up to the repository root) turns on and trusts it as it is now; a file changed since
waits again. Your own ~/.claude/ and ~/.codex/ files need no trust. A warren started from now
applies them (in a running TUI, /trust applies them at once).

Options:
  --list      the files trusted (and .mcp.json files allowed), with when
  --revoke    forget the trusted files below DIR (default: this directory)
${HELP}`,
    load: () => import("./trust.js").then((m) => m.runTrust),
  },
  {
    name: "db",
    summary: "the database: url | status | stop (embedded server)",
    usage: `Usage: warren db url|status|stop

  url     print the connection URL in use: DATABASE_URL, or the embedded server's
          (started if it is not running)
  status  where the database is and whether it answers
  stop    stop the embedded server (other warren processes start it again on demand)

Without DATABASE_URL warren uses an embedded PostgreSQL under $WARREN_HOME
(default ~/.local/share/warren), on its own port.

Options:
  --json      with status: print one JSON object
${HELP}`,
    load: () => import("./db.js").then((m) => m.runDb),
  },
  {
    name: "doctor",
    summary: "check the database, the sandbox and the model server, one line each",
    usage: `Usage: warren doctor [--json]

One line each, and what to do about it:
  database      DATABASE_URL (masked) and whether it answers, or the embedded server
                under $WARREN_HOME (not started by doctor)
  sandbox       bubblewrap on (bash is confined to its working directory), off (the
                config's "sandbox": "off") or unavailable and why, with how to install it
  model server  whether the base URL (OPENAI_BASE_URL, "base_url", else OpenAI's)
                answers GET /models

Exits 1 when the database or the model server does not answer, or when the sandbox is
required ("sandbox": "on") and unavailable; 0 otherwise.

Options:
  --json      print one JSON object: {database, sandbox, model_server}, each {ok, text}
${HELP}`,
    load: () => import("./doctor.js").then((m) => m.runDoctor),
  },
  {
    name: "migrate",
    summary: "apply database migrations",
    usage: `Usage: warren migrate

Apply the committed migrations to the database in use (DATABASE_URL or the embedded
server), under an advisory lock so concurrent starts migrate once.

Options:
${HELP}`,
    load: () => import("./migrate.js").then((m) => m.runMigrate),
  },
];
