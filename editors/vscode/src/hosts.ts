// Other machines (config.toml's [[hosts]], docs/hosts.md): which are
// configured (`agentd hosts --configured`, no host reached), and one
// connection per other host, `agentd --stdio --host NAME --no-start`: the
// editor protocol forwarded over ssh to that host's daemon. A connection
// never starts a daemon there and never ends a session: a host without a
// daemon, one ssh cannot reach, and one whose connection dropped are states
// of the host, tried again after 1 s, doubling to 30 s. Nothing here
// imports `vscode`.
import * as cp from 'child_process';
import { Emitter } from 'vscode-jsonrpc/node';

import { Agentd, AgentdClient, AgentdError, ClientOptions, describeExit, ExitInfo, NOT_RUNNING, StartError } from './client';
import {
  ErrorCodes,
  ExitedNotification,
  OutputNotification,
  StateNotification,
} from './protocol';
import { oneLine } from './format';
import { LiveAgentd } from './live';

/** One [[hosts]] entry as `agentd hosts --configured` prints it. */
export interface HostEntry {
  name: string;
  local?: boolean;
  ssh?: string;
}

/**
 * The configured hosts, this machine among them (marked local). Only this
 * machine when there are no [[hosts]], and when agentd cannot say (an
 * older agentd, a config it refuses): the window then works as with one
 * machine, and `log` says why.
 */
export function configuredHosts(path: string, env: NodeJS.ProcessEnv, log: (line: string) => void, timeoutMs = 10_000): Promise<HostEntry[]> {
  const only: HostEntry[] = [{ name: 'local', local: true }];
  return new Promise((resolve) => {
    cp.execFile(path, ['hosts', '--configured'], { env, timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) {
        log(`[client] agentd hosts --configured: ${oneLine(String(stderr || err.message), 300)}; showing this machine only`);
        return resolve(only);
      }
      try {
        const hosts = (JSON.parse(stdout) as { hosts?: HostEntry[] }).hosts ?? [];
        const valid = hosts.filter((h) => h && typeof h.name === 'string' && h.name);
        resolve(valid.some((h) => h.local) ? valid : [...only, ...valid]);
      } catch (e) {
        log(`[client] agentd hosts --configured printed no JSON (${(e as Error).message}); showing this machine only`);
        resolve(only);
      }
    });
  });
}

/** What a window knows of another host's connection. */
export type HostState =
  | { kind: 'connecting' }
  | { kind: 'up' }
  /** The host answers, but no agentd daemon runs there (-32042); the window starts none. */
  | { kind: 'nodaemon'; message: string; retryMs: number }
  /** ssh could not reach it, or its agentd refused: the error's words, plain text. */
  | { kind: 'down'; message: string; retryMs: number }
  /** The connection dropped; connecting again. */
  | { kind: 'reconnecting'; message: string; retryMs: number };

/** A host's state in a few words, for the tree's group row. */
export function hostStateLabel(s: HostState): string {
  switch (s.kind) {
    case 'connecting':
      return 'connecting';
    case 'up':
      return 'up';
    case 'nodaemon':
      return 'no daemon';
    case 'down':
      return 'down';
    case 'reconnecting':
      return 'reconnecting';
  }
}

export interface HostConnectionOptions {
  /** agentd's options for this machine's sidecar; `--host NAME --no-start` is added to its args. */
  clientOptions: () => ClientOptions;
  log?: (line: string) => void;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/** The arguments of a host's sidecar: the usual ones, then `--host NAME --no-start`. */
export function hostArgs(args: string[], host: string): string[] {
  return [...args.filter((a) => a !== '--private'), '--host', host, '--no-start'];
}

/**
 * One other host's connection, kept up: connects, and when that fails or
 * the connection drops, tries again after 1 s, 2 s, 4 s … 30 s, for as long
 * as the window is open. Every method goes to this host's agentd only.
 */
export class HostConnection extends LiveAgentd implements Agentd {
  private readonly stateChange = new Emitter<HostState>();
  private readonly connectEmitter = new Emitter<AgentdClient>();
  private readonly stateEmitter = new Emitter<StateNotification>();
  private readonly outputEmitter = new Emitter<OutputNotification>();
  private readonly exitedEmitter = new Emitter<ExitedNotification>();
  readonly onDidChangeState = this.stateChange.event;
  /** Connected to the host's daemon (again). */
  readonly onDidConnect = this.connectEmitter.event;
  readonly onState = this.stateEmitter.event;
  readonly onOutput = this.outputEmitter.event;
  readonly onExited = this.exitedEmitter.event;

  private current: AgentdClient | undefined;
  private _state: HostState = { kind: 'connecting' };
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly log: (line: string) => void;
  private readonly base: number;
  private readonly max: number;

  constructor(
    readonly name: string,
    private readonly opts: HostConnectionOptions,
  ) {
    super();
    this.log = opts.log ?? (() => undefined);
    this.base = opts.baseDelayMs ?? 1000;
    this.max = opts.maxDelayMs ?? 30_000;
  }

  get state(): HostState {
    return this._state;
  }

  get client(): AgentdClient | undefined {
    return this.current?.running ? this.current : undefined;
  }

  private setState(s: HostState): void {
    this._state = s;
    this.stateChange.fire(s);
  }

  /** Connects; resolves once the first attempt succeeded or failed (later ones follow on their own). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  private nextDelay(): number {
    const d = Math.min(this.base * 2 ** this.failures, this.max);
    this.failures++;
    return d;
  }

  private retry(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, ms);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const o = this.opts.clientOptions();
    let client: AgentdClient;
    try {
      client = await AgentdClient.start({ ...o, args: hostArgs(o.args ?? [], this.name) });
    } catch (e) {
      if (this.stopped) return;
      const retryMs = this.nextDelay();
      const refused = e instanceof StartError ? e.failure?.refused : undefined;
      const message = oneLine(refused?.message ?? (e as Error).message, 500);
      if (refused?.code === ErrorCodes.NoDaemon) {
        this.setState({ kind: 'nodaemon', message, retryMs });
      } else {
        this.setState({ kind: 'down', message, retryMs });
      }
      this.log(`[host ${this.name}] ${message}; trying again in ${retryMs} ms`);
      this.retry(retryMs);
      return;
    }
    if (this.stopped) {
      void client.stop();
      return;
    }
    this.current = client;
    this.failures = 0;
    client.onState((n) => this.stateEmitter.fire(n));
    client.onOutput((n) => this.outputEmitter.fire(n));
    client.onExited((n) => this.exitedEmitter.fire(n));
    client.onClose((x) => this.closed(client, x));
    this.log(`[host ${this.name}] connected: agentd ${client.info.daemon?.version ?? client.info.serverInfo.version ?? ''} (daemon pid ${client.info.daemon?.pid ?? '?'})`);
    this.setState({ kind: 'up' });
    this.connectEmitter.fire(client);
  }

  private closed(client: AgentdClient, x: ExitInfo): void {
    if (client !== this.current) return;
    this.current = undefined;
    if (this.stopped || x.expected) return;
    const retryMs = this.nextDelay();
    const message = `the connection to host ${this.name} ended (${describeExit(x)})`;
    this.log(`[host ${this.name}] ${message}; connecting again in ${retryMs} ms`);
    this.setState({ kind: 'reconnecting', message, retryMs });
    this.retry(retryMs);
  }

  /** Closes the connection (the host's sessions run on) and tries no more. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const c = this.current;
    this.current = undefined;
    if (c) await c.stop();
  }

  protected live(method: string): AgentdClient {
    const c = this.client;
    if (!c) {
      const s = this._state;
      const why = s.kind === 'up' || s.kind === 'connecting' ? 'connecting' : `${hostStateLabel(s)}: ${s.message}`;
      throw new AgentdError(method, NOT_RUNNING, `host ${this.name} is not connected (${why})`);
    }
    return c;
  }

}
