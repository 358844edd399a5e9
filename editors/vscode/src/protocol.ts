// The agentd editor protocol, version 1: plain types mirroring rpc/protocol/types.go.
// docs/protocol.md is the normative reference. Nothing here imports `vscode`.

// The protocol's version, methods, notifications and error codes are
// generated from rpc/protocol/names.go (protocol_names.ts).
export { PROTOCOL_VERSION, Methods, Notifications, ErrorCodes } from './protocol_names';

export type StateName = 'working' | 'blocked' | 'idle' | 'done' | 'error' | 'exited';
export type Outcome = 'completed' | 'failed' | 'interrupted' | 'unknown';
export type StateSource = 'screen' | 'osc' | 'hook' | 'acp' | 'log' | 'process';
export type PromptKind = 'permission' | 'question' | 'trust' | 'auth' | 'confirm';

/** Every state, in the order a person cares about them (most urgent first). */
export const STATES: readonly StateName[] = ['blocked', 'error', 'done', 'working', 'idle', 'exited'];


export interface ClientInfo {
  name: string;
  version?: string;
}

export interface InitializeParams {
  clientInfo?: ClientInfo;
  capabilities?: Record<string, unknown>;
  /** The folders the window has open; sessions it spawns record them. */
  workspaceFolders?: string[];
}

export interface AgentInfo {
  name: string;
  display: string;
  process?: string[];
}

/** The agentd process that owns the sessions: the per-user daemon, or a private one. */
export interface Daemon {
  version: string;
  protocolVersion: number;
  pid: number;
  /** Changes each time a daemon starts: session ids of another instance are other sessions. */
  instance: string;
  socket?: string;
  startedAt: string;
  /** Sessions end with this one client (`--stdio --private`). */
  private: boolean;
}

export interface InitializeResult {
  serverInfo: ClientInfo;
  protocolVersion: number;
  agents: AgentInfo[];
  daemon?: Daemon;
  /** For the person: e.g. the daemon is another build than this agentd. */
  warnings?: string[];
}

export interface PromptOption {
  id: string;
  label: string;
  description?: string;
  kind?: 'allow' | 'reject' | string;
  selected?: boolean;
}

/** What a subject is: the command, the file edited or written or read, the URL, the folder, the tool. */
export type SubjectKind = 'command' | 'edit' | 'write' | 'read' | 'fetch' | 'folder' | 'tool' | 'other';
/**
 * What a prompt asks the person to approve (docs/protocol.md, "Prompt").
 * Untrusted text an agent, a model or a repository wrote: agentd has
 * stripped escapes and control characters, but it must still be escaped
 * for wherever it lands (markdown, a label with icons, a link-parsing
 * notification).
 */
export interface Subject {
  kind: SubjectKind | string;
  /** One line: the command, the path, the URL, the folder or the tool's name ("" when agentd could not read it). */
  text: string;
  /** Rows: a multi-line command, an edit's diff (unified, or rows as the agent drew them), a fetch's prompt, a tool's arguments. */
  detail?: string;
  /** agentd could not see all of it. With kind "other" and text "": it could not read it at all. */
  truncated?: boolean;
}
export interface Prompt {
  promptId: string;
  kind: PromptKind | string;
  question: string;
  options: PromptOption[];
  freeform: boolean;
  subject?: Subject;
}

/** A way to log in that an ACP agent offers (data of -32014). */
export interface AuthMethod {
  id: string;
  name: string;
  description?: string;
  /** agent: the agent logs in itself; env_var: set `vars`; terminal: run `command args` in a terminal. */
  type: 'agent' | 'env_var' | 'terminal' | string;
  vars?: string[];
  command?: string;
  args?: string[];
  label?: string;
}

/** What an ACP agent said of itself in initialize. */
export interface ACPAgentInfo {
  name?: string;
  title?: string;
  version?: string;
}

/** The data of a -32014 spawn error. */
export interface AuthRequiredData {
  agentInfo: ACPAgentInfo;
  message: string;
  authMethods: AuthMethod[];
}

export interface Exit {
  exitCode: number;
  signal?: string;
  at?: string;
}

/** Which client started a session, and the folders it had open. */
export interface Origin {
  client?: string;
  workspaceFolders?: string[];
}

export interface SpawnParams {
  argv: string[];
  cwd: string;
  /** Added to this window's environment (agentd's own in private mode); a null value removes a variable. */
  env?: Record<string, string | null>;
  cols?: number;
  rows?: number;
  agent?: string;
  protocol?: 'pty' | 'acp';
  hooks?: boolean;
  name?: string;
  /** ACP: the login method to use, one a -32014 error listed. */
  authMethod?: string;
}

export interface Session {
  sessionId: string;
  name: string;
  agent: string;
  argv: string[];
  cwd: string;
  pid: number;
  cols: number;
  rows: number;
  state: StateName;
  outcome?: Outcome;
  stateSource: StateSource | string;
  reason: string;
  since: string;
  prompt?: Prompt | null;
  exit?: Exit | null;
  origin?: Origin | null;
  /** The agent's own words for an error state. */
  message?: string;
  /** ACP sessions: what the agent said of itself. */
  agentInfo?: ACPAgentInfo;
  /** ACP sessions: the PTY session running the agent's terminal login. */
  loginSessionId?: string;
}

export interface ListResult {
  sessions: Session[];
}

export interface Cursor {
  row: number;
  col: number;
  visible: boolean;
}

export interface ReadResult {
  rows: string[];
  cursor: Cursor;
  title: string;
  revision: number;
}

export interface SessionRef {
  sessionId: string;
}

export interface ResizeParams {
  sessionId: string;
  cols: number;
  rows: number;
}

export interface InputParams {
  sessionId: string;
  data: string;
}

export interface SubscribeParams {
  sessionId: string;
  output: boolean;
}

export interface KillParams {
  sessionId: string;
  signal?: string;
}

/** `session/prompt`: a prompt turn for an ACP session. */
export interface PromptParams {
  sessionId: string;
  text: string;
}

export interface SendParams {
  sessionId: string;
  text: string;
  submit?: boolean;
}

export interface AnswerParams {
  sessionId: string;
  promptId: string;
  optionId?: string;
  text?: string;
}

export interface AnswerResult {
  state: StateName;
  stateSource: StateSource | string;
  reason: string;
  prompt?: Prompt | null;
}

export interface ClassifyResult {
  agent: string;
  state: StateName;
  outcome?: Outcome;
  reason: string;
  evidence: { region: string; text: string };
  prompt?: Prompt | null;
}

/** `session/state`: sent when (state, promptId, outcome) changes. */
export interface StateNotification {
  sessionId: string;
  agent: string;
  state: StateName;
  previous: StateName | '';
  outcome?: Outcome;
  stateSource: StateSource | string;
  reason: string;
  since: string;
  /** True at most once per session and state within the cooldown: pop a notice only then. */
  attention: boolean;
  prompt?: Prompt | null;
  /** The agent's own words for an error state. */
  message?: string;
}

/** `session/output`: `dropped` bytes were missed, and `data` is then a repaint. */
export interface OutputNotification {
  sessionId: string;
  data: string;
  dropped?: number;
}

/** `session/update`: an ACP agent's update, as it sent it. */
export interface UpdateNotification {
  sessionId: string;
  update?: unknown;
  dropped?: number;
}

export interface ExitedNotification {
  sessionId: string;
  exitCode: number;
  signal?: string;
}

/** client/focus: whether the person is looking at this client, and whether its setting wants desktop notices. */
export interface FocusParams {
  focused: boolean;
  /** false: no desktop notices while this client is connected. */
  desktopNotifications?: boolean;
}

/** `data` of the -32020 (blocked) and -32021 (stale) errors. */
export interface PromptErrorData {
  prompt: Prompt | null;
}
