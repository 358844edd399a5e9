// The connection to one agentd process: it starts `agentd --stdio`, speaks
// JSON-RPC over the child's stdio with vscode-jsonrpc, and types every method
// of docs/protocol.md. Nothing here imports `vscode`, so the tests drive it
// against the real binary.
import * as cp from 'child_process';
import * as readline from 'readline';
import {
  createMessageConnection,
  Emitter,
  ErrorCodes as RpcErrorCodes,
  Event,
  MessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  Trace,
} from 'vscode-jsonrpc/node';

import {
  AnswerParams,
  AnswerResult,
  ClassifyResult,
  ClientInfo,
  ExitedNotification,
  FocusParams,
  InitializeResult,
  InputParams,
  KillParams,
  ListResult,
  Methods,
  Notifications,
  OutputNotification,
  Prompt,
  PromptErrorData,
  PromptParams,
  ReadResult,
  ResizeParams,
  SendParams,
  Session,
  SpawnParams,
  StateNotification,
  UpdateNotification,
} from './protocol';
import { cmdline, describeStartFailure, StartFailure, StderrTail } from './startfail';

/** Used when there is no agentd to ask: it is starting, restarting or stopped. */
export const NOT_RUNNING = -1;

/** An error answered by agentd (or the absence of agentd), with its code and data. */
export class AgentdError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'AgentdError';
  }

  /** The prompt carried by -32020 (blocked) and -32021 (stale); null when none is on screen. */
  get prompt(): Prompt | null | undefined {
    const d = this.data as PromptErrorData | undefined;
    return d && typeof d === 'object' && 'prompt' in d ? d.prompt : undefined;
  }
}

/**
 * agentd did not start: `notFound` when the program is missing or not
 * executable; `incompatible` when it speaks another protocol (it was not
 * started); else `failure` says how it ended (or refused) before it
 * answered initialize.
 */
export class StartError extends AgentdError {
  constructor(
    message: string,
    readonly notFound: boolean,
    readonly failure?: StartFailure,
    readonly incompatible = false,
  ) {
    super('spawn', NOT_RUNNING, message);
    this.name = 'StartError';
  }
}

export function isAgentdError(e: unknown, code?: number): e is AgentdError {
  return e instanceof AgentdError && (code === undefined || e.code === code);
}

/** How the agentd process ended. `expected` is true when stop() asked for it. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
  expected: boolean;
}

/** What the editor glue needs from agentd: the methods and the notifications. */
export interface Agentd {
  readonly onState: Event<StateNotification>;
  readonly onOutput: Event<OutputNotification>;
  readonly onExited: Event<ExitedNotification>;
  spawn(p: SpawnParams): Promise<Session>;
  list(): Promise<Session[]>;
  read(sessionId: string): Promise<ReadResult>;
  resize(p: ResizeParams): Promise<void>;
  input(p: InputParams): Promise<void>;
  /** Streams a session's output to `listener`, starting with a repaint; dispose to stop. */
  watchOutput(sessionId: string, listener: (n: OutputNotification) => void): Promise<{ dispose(): void }>;
  seen(sessionId: string): Promise<void>;
  kill(p: KillParams): Promise<void>;
  classify(sessionId: string): Promise<ClassifyResult>;
  send(p: SendParams): Promise<void>;
  answer(p: AnswerParams): Promise<AnswerResult>;
}

export interface ClientOptions {
  /** agentd's path, or a bare name looked up on PATH. */
  path: string;
  /** Arguments after `--stdio`, e.g. `['--cooldown', '30s']`. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  clientInfo?: ClientInfo;
  /** The window's folders, told in initialize. */
  workspaceFolders?: string[];
  /** Receives agentd's stderr (its log with --verbose) line by line, and the client's own notes. */
  log?: (line: string) => void;
  /** Logs every JSON-RPC message through `log` when set. */
  trace?: 'off' | 'messages' | 'verbose';
}

/** One running `agentd --stdio` and the connection to it. */
export class AgentdClient implements Agentd {
  private readonly stateEmitter = new Emitter<StateNotification>();
  private readonly outputEmitter = new Emitter<OutputNotification>();
  private readonly exitedEmitter = new Emitter<ExitedNotification>();
  private readonly updateEmitter = new Emitter<UpdateNotification>();
  private readonly closeEmitter = new Emitter<ExitInfo>();
  readonly onState = this.stateEmitter.event;
  readonly onOutput = this.outputEmitter.event;
  readonly onExited = this.exitedEmitter.event;
  /** ACP sessions' updates, passed through. */
  readonly onUpdate = this.updateEmitter.event;
  /** The agentd process ended (after stop(), or on its own). */
  readonly onClose = this.closeEmitter.event;

  private stopping = false;
  private exitInfo: ExitInfo | undefined;
  private readonly exitPromise: Promise<ExitInfo>;
  private readonly watchers = new Map<string, Set<(n: OutputNotification) => void>>();
  private initResult: InitializeResult | undefined;

  private constructor(
    private readonly child: cp.ChildProcessWithoutNullStreams,
    private readonly conn: MessageConnection,
    private readonly log: (line: string) => void,
  ) {
    this.exitPromise = new Promise((resolve) => {
      // 'close', not 'exit': 'exit' can come before the last of stdout is
      // read, and a reply sent just before agentd left (agentd/stop's) would
      // be dropped with the connection.
      child.once('close', (code, signal) => {
        const x: ExitInfo = { code, signal, expected: this.stopping };
        this.exitInfo = x;
        // vscode-jsonrpc hands what it read to its message queue on a
        // setImmediate: a reply that came just before agentd exited (an
        // initialize refused, then exit) is still there. Let it through
        // before dispose() rejects what is pending.
        setImmediate(() => {
          this.conn.dispose();
          this.closeEmitter.fire(x);
          resolve(x);
        });
      });
    });
    conn.onNotification(Notifications.state, (n: StateNotification) => this.stateEmitter.fire(n));
    conn.onNotification(Notifications.exited, (n: ExitedNotification) => this.exitedEmitter.fire(n));
    conn.onNotification(Notifications.update, (n: UpdateNotification) => this.updateEmitter.fire(n));
    conn.onNotification(Notifications.output, (n: OutputNotification) => {
      this.outputEmitter.fire(n);
      for (const l of this.watchers.get(n.sessionId) ?? []) l(n);
    });
    conn.onError(([err]) => this.log(`[client] connection error: ${err.message}`));
  }

  /** Starts agentd and sends `initialize`; rejects when it cannot be started. */
  static async start(opts: ClientOptions): Promise<AgentdClient> {
    const log = opts.log ?? (() => undefined);
    const args = ['--stdio', '--verbose', ...(opts.args ?? [])];
    const child = cp.spawn(opts.path, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const argv = [opts.path, ...args];
    const stderr = new StderrTail();
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      log(line);
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err: NodeJS.ErrnoException) => {
        const missing = err.code === 'ENOENT' || err.code === 'EACCES';
        // "agentd --verbose" is no program's name: the setting holds a path only.
        const words = /\s/.test(opts.path) ? ' (agentd.path is the program alone, without arguments)' : '';
        const message = missing
          ? `agentd was not found at "${opts.path}" (${err.code})${words}: install it, put it on PATH or set agentd.path`
          : `agentd could not be started from "${opts.path}": ${err.message}`;
        log(`[client] ${message}; command: ${cmdline(argv)}`);
        reject(new StartError(message, missing));
      });
    });
    const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const client = new AgentdClient(child, conn, log);
    if (opts.trace && opts.trace !== 'off') {
      void conn.trace(opts.trace === 'verbose' ? Trace.Verbose : Trace.Messages, { log: (m: string, d?: string) => log(`[trace] ${m}${d ? ' ' + d : ''}`) });
    }
    conn.listen();
    try {
      client.initResult = await client.request<InitializeResult>(Methods.initialize, {
        clientInfo: opts.clientInfo ?? { name: 'agentd-vscode' },
        capabilities: {},
        workspaceFolders: opts.workspaceFolders,
      });
    } catch (e) {
      // agentd died, or refused (a daemon of another protocol, a socket
      // folder it will not use) and exits: say how, with the command line
      // and what it printed, rather than "connection disposed".
      // (Not vscode-jsonrpc's own errors for a connection that broke: a
      // write to a pipe agentd closed when it exited.)
      const ours = [RpcErrorCodes.MessageWriteError, RpcErrorCodes.MessageReadError, RpcErrorCodes.PendingResponseRejected, RpcErrorCodes.ConnectionInactive, NOT_RUNNING];
      const refused = e instanceof AgentdError && !ours.includes(e.code) ? { code: e.code, message: e.message } : undefined;
      const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), refused ? 2000 : 1000).unref());
      const x = await Promise.race([client.exitPromise, timeout]);
      child.kill('SIGKILL');
      if (x || refused) {
        const x2 = x ?? (await client.exitPromise);
        const failure: StartFailure = { argv, code: x2.code, signal: x2.signal, stderr: stderr.lines(), refused };
        throw new StartError(describeStartFailure(failure), false, failure);
      }
      throw e;
    }
    return client;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get info(): InitializeResult {
    return this.initResult!;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** Resolves when the process has ended. */
  get exited(): Promise<ExitInfo> {
    return this.exitPromise;
  }

  private async request<R>(method: string, params?: object): Promise<R> {
    if (!this.running) {
      throw new AgentdError(method, NOT_RUNNING, `${method}: agentd is not running`);
    }
    try {
      return params === undefined ? await this.conn.sendRequest<R>(method) : await this.conn.sendRequest<R>(method, params);
    } catch (e) {
      if (e instanceof ResponseError) {
        throw new AgentdError(method, e.code, e.message, e.data);
      }
      throw new AgentdError(method, NOT_RUNNING, `${method}: ${(e as Error).message ?? String(e)}`);
    }
  }

  spawn(p: SpawnParams): Promise<Session> {
    return this.request(Methods.spawn, p);
  }

  async list(): Promise<Session[]> {
    return (await this.request<ListResult>(Methods.list)).sessions;
  }

  read(sessionId: string): Promise<ReadResult> {
    return this.request(Methods.read, { sessionId });
  }

  async resize(p: ResizeParams): Promise<void> {
    await this.request(Methods.resize, p);
  }

  async input(p: InputParams): Promise<void> {
    await this.request(Methods.input, p);
  }

  async subscribe(sessionId: string, output: boolean): Promise<void> {
    await this.request(Methods.subscribe, { sessionId, output });
  }

  // agentd streams one output per session; here it is shared among the views
  // of that session. Each new view asks again so it gets a repaint (the
  // others redraw the same screen, which is harmless).
  async watchOutput(sessionId: string, listener: (n: OutputNotification) => void): Promise<{ dispose(): void }> {
    let set = this.watchers.get(sessionId);
    if (!set) this.watchers.set(sessionId, (set = new Set()));
    set.add(listener);
    try {
      await this.subscribe(sessionId, true);
    } catch (e) {
      set.delete(listener);
      throw e;
    }
    return {
      dispose: () => {
        const s = this.watchers.get(sessionId);
        if (!s || !s.delete(listener) || s.size > 0) return;
        this.watchers.delete(sessionId);
        if (this.running) this.subscribe(sessionId, false).catch(() => undefined);
      },
    };
  }

  async seen(sessionId: string): Promise<void> {
    await this.request(Methods.seen, { sessionId });
  }

  /** client/focus: agentd raises desktop notices only while no client is focused. */
  async focus(p: FocusParams): Promise<void> {
    await this.request(Methods.focus, p);
  }

  async kill(p: KillParams): Promise<void> {
    await this.request(Methods.kill, p);
  }

  classify(sessionId: string): Promise<ClassifyResult> {
    return this.request(Methods.classify, { sessionId });
  }

  async send(p: SendParams): Promise<void> {
    await this.request(Methods.send, p);
  }

  /** ACP sessions: a prompt turn (-32026 while one runs, -32030 on a PTY session). */
  async prompt(p: PromptParams): Promise<void> {
    await this.request(Methods.prompt, p);
  }

  /** ACP sessions: cancels the turn. */
  async cancel(sessionId: string): Promise<void> {
    await this.request(Methods.cancel, { sessionId });
  }

  answer(p: AnswerParams): Promise<AnswerResult> {
    return this.request(Methods.answer, p);
  }

  /**
   * Ends the agentd that owns the sessions: the per-user daemon (every
   * window's), or a private one. Without `force` a daemon with live sessions
   * refuses (-32040, naming them); with it they end too.
   */
  async stopDaemon(force: boolean): Promise<void> {
    // The connection ends with the daemon: that end is asked for.
    this.stopping = true;
    try {
      await this.request(Methods.stop, { force });
    } catch (e) {
      // The daemon answers, then closes every connection; vscode-jsonrpc
      // may drop that answer with the connection (it handles messages a
      // tick later). A connection that ended after the ask is the answer.
      const dropped = e instanceof AgentdError && e.code === RpcErrorCodes.PendingResponseRejected && !this.running;
      if (!dropped) {
        this.stopping = false;
        throw e;
      }
    }
  }

  /** Whether the sessions end with this client (`--stdio --private`). */
  get private(): boolean {
    return this.initResult?.daemon?.private ?? true;
  }

  /**
   * Closes this connection: shutdown, exit, close stdin, then SIGKILL after
   * `graceMs`. A private agentd ends every session; the per-user daemon keeps them.
   */
  async stop(graceMs = 3000): Promise<ExitInfo> {
    if (!this.running) return this.exitPromise;
    this.stopping = true;
    const timer = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
    try {
      await Promise.race([this.conn.sendRequest(Methods.shutdown), timer(graceMs)]);
      await this.conn.sendNotification(Methods.exit);
    } catch {
      // agentd may already be gone; closing stdin below ends it anyway.
    }
    this.child.stdin.end();
    const killer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const info = await this.exitPromise;
    clearTimeout(killer);
    return info;
  }

  /** Kills agentd at once, as a crash would (for tests and a stuck process). */
  kill9(): void {
    this.child.kill('SIGKILL');
  }
}

export function describeExit(x: { code: number | null; signal: string | null }): string {
  if (x.signal) return `killed by ${x.signal}`;
  return `exit code ${x.code}`;
}
