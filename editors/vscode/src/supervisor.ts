// Keeps one agentd running: starts it, and when it dies on its own restarts it
// with back-off (1 s, 2 s, 4 s … 30 s), giving up after a run of failures.
// Everyone else talks to the Supervisor, which forwards to the live client.
// Nothing here imports `vscode`.
import { Emitter } from 'vscode-jsonrpc/node';

import {
  Agentd,
  AgentdClient,
  AgentdError,
  ClientOptions,
  describeExit,
  ExitInfo,
  NOT_RUNNING,
  StartError,
} from './client';
import { LiveAgentd } from './live';
import { Binary, describeBinary, describeSource } from './locate';
import {
  PROTOCOL_VERSION,
  ExitedNotification,
  FocusParams,
  OutputNotification,
  StateNotification,
  Methods,
} from './protocol';

export type Status =
  | { kind: 'stopped' }
  | { kind: 'starting' }
  | { kind: 'running'; pid: number; version: string; restarts: number; binary?: Binary }
  | { kind: 'restarting'; delayMs: number; attempt: number; reason: string }
  /**
   * Given up. `startup`: agentd never started (missing, or it exited or
   * refused before it answered initialize), so a retry as is would fail the
   * same way; else it kept dying after it had run.
   */
  | { kind: 'failed'; message: string; notFound: boolean; startup: boolean };

export interface SupervisorOptions {
  /** First restart delay; doubled after each failure in a row. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Restarts in a row (without a stable run between) before giving up. */
  maxAttempts?: number;
  /** A run at least this long resets the back-off. */
  stableMs?: number;
  log?: (line: string) => void;
  /**
   * Finds and checks the binary before each start (locate.ts): its path
   * replaces clientOptions().path. A StartError from it (nothing found,
   * another protocol) is given up on at once, like a missing program.
   */
  locate?: () => Promise<Binary>;
}

export class Supervisor extends LiveAgentd implements Agentd {
  private readonly statusEmitter = new Emitter<Status>();
  private readonly startEmitter = new Emitter<AgentdClient>();
  private readonly stateEmitter = new Emitter<StateNotification>();
  private readonly outputEmitter = new Emitter<OutputNotification>();
  private readonly exitedEmitter = new Emitter<ExitedNotification>();
  /** Every change of status: starting, running, restarting (with the delay), failed, stopped. */
  readonly onDidChangeStatus = this.statusEmitter.event;
  /** A new agentd answered initialize; sessions of an earlier one are gone. */
  readonly onDidStart = this.startEmitter.event;
  readonly onState = this.stateEmitter.event;
  readonly onOutput = this.outputEmitter.event;
  readonly onExited = this.exitedEmitter.event;

  private current: AgentdClient | undefined;
  private currentStartedAt = 0;
  private failures = 0;
  private restarts = 0;
  private timer: NodeJS.Timeout | undefined;
  private wanted = false;
  private generation = 0;
  private _status: Status = { kind: 'stopped' };
  private readonly opts: Required<Omit<SupervisorOptions, 'log' | 'locate'>> & { log: (line: string) => void; locate?: () => Promise<Binary> };
  private _binary: Binary | undefined;

  constructor(
    private readonly clientOptions: () => ClientOptions,
    opts: SupervisorOptions = {},
  ) {
    super();
    this.opts = {
      baseDelayMs: opts.baseDelayMs ?? 1000,
      maxDelayMs: opts.maxDelayMs ?? 30_000,
      maxAttempts: opts.maxAttempts ?? 6,
      stableMs: opts.stableMs ?? 60_000,
      log: opts.log ?? (() => undefined),
      locate: opts.locate,
    };
  }

  get status(): Status {
    return this._status;
  }

  /** The binary found for the last start (undefined without a locate option, or before one). */
  get binary(): Binary | undefined {
    return this._binary;
  }

  get client(): AgentdClient | undefined {
    return this.current?.running ? this.current : undefined;
  }

  private setStatus(s: Status): void {
    this._status = s;
    this.statusEmitter.fire(s);
  }

  /** Starts agentd; resolves once the first attempt has succeeded or failed. */
  async start(): Promise<void> {
    this.wanted = true;
    this.failures = 0;
    await this.launch(++this.generation, true);
  }

  /** Stops agentd (ending its sessions) and starts a new one with the back-off reset. */
  async restart(): Promise<void> {
    await this.stop();
    this.restarts++;
    await this.start();
  }

  /** Stops agentd and keeps it stopped. */
  async stop(): Promise<void> {
    this.wanted = false;
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const c = this.current;
    this.current = undefined;
    if (c) await c.stop();
    this.setStatus({ kind: 'stopped' });
  }

  /**
   * Starts agentd. `first`: asked for (start, restart), not a restart after
   * it died; one that does not start then is given up on at once, and said
   * once: the same program with the same settings would fail the same way.
   */
  private async launch(gen: number, first = false): Promise<void> {
    this.setStatus({ kind: 'starting' });
    let client: AgentdClient;
    let bin: Binary | undefined;
    try {
      if (this.opts.locate) {
        bin = await this.opts.locate();
        this._binary = bin;
        this.opts.log(`[client] ${describeBinary(bin)}`);
      }
      const o = this.clientOptions();
      client = await AgentdClient.start(bin ? { ...o, path: bin.path } : o);
      const theirs = client.info.protocolVersion;
      if (bin && theirs !== PROTOCOL_VERSION) {
        // version --json could not tell (an older agentd): initialize can.
        void client.stop();
        throw new StartError(
          `The agentd at ${bin.path} (${describeSource(bin.source)}, version ${client.info.serverInfo.version ?? 'unknown'}) speaks protocol ${theirs}, and this extension speaks protocol ${PROTOCOL_VERSION}: it was stopped. Set agentd.path to an agentd of protocol ${PROTOCOL_VERSION}, or install the extension's .vsix for your platform (it has agentd inside).`,
          false,
          undefined,
          true,
        );
      }
    } catch (e) {
      if (gen !== this.generation) return;
      if (e instanceof StartError && (e.notFound || e.incompatible || first)) {
        this.opts.log(`[client] ${e.message}`);
        this.setStatus({ kind: 'failed', message: e.message, notFound: e.notFound, startup: true });
        return;
      }
      this.failed(gen, (e as Error).message);
      return;
    }
    if (gen !== this.generation) {
      void client.stop();
      return;
    }
    this.current = client;
    this.currentStartedAt = Date.now();
    client.onState((n) => this.stateEmitter.fire(n));
    client.onOutput((n) => this.outputEmitter.fire(n));
    client.onExited((n) => this.exitedEmitter.fire(n));
    client.onClose((x) => this.closed(gen, client, x));
    this.opts.log(`[client] agentd ${client.info.serverInfo.version ?? ''} started (pid ${client.pid}, protocol ${client.info.protocolVersion}); ${describeDaemon(client)}`);
    this.setStatus({ kind: 'running', pid: client.pid ?? 0, version: client.info.serverInfo.version ?? '', restarts: this.restarts, binary: bin });
    this.startEmitter.fire(client);
  }

  private closed(gen: number, client: AgentdClient, x: ExitInfo): void {
    if (x.expected || gen !== this.generation || client !== this.current) return;
    this.current = undefined;
    if (Date.now() - this.currentStartedAt >= this.opts.stableMs) this.failures = 0;
    this.failed(gen, `agentd stopped unexpectedly (${describeExit(x)})`);
  }

  private failed(gen: number, reason: string): void {
    if (!this.wanted) return;
    this.failures++;
    if (this.failures > this.opts.maxAttempts) {
      const message = `${reason}; it failed ${this.failures} times in a row, so it is not restarted again. See the agentd output, then run "agentd: Restart agentd".`;
      this.opts.log(`[client] ${message}`);
      this.setStatus({ kind: 'failed', message, notFound: false, startup: false });
      return;
    }
    const delayMs = Math.min(this.opts.baseDelayMs * 2 ** (this.failures - 1), this.opts.maxDelayMs);
    this.opts.log(`[client] ${reason}; restarting in ${delayMs} ms (attempt ${this.failures})`);
    this.setStatus({ kind: 'restarting', delayMs, attempt: this.failures, reason });
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (gen !== this.generation) return;
      this.restarts++;
      void this.launch(gen);
    }, delayMs);
  }

  protected live(method: string): AgentdClient {
    const c = this.client;
    if (!c) {
      const why =
        this._status.kind === 'restarting'
          ? `it is restarting (in ${Math.round(this._status.delayMs / 1000)} s)`
          : this._status.kind === 'failed'
            ? this._status.message
            : `it is ${this._status.kind}`;
      throw new AgentdError(method, NOT_RUNNING, `agentd is not running: ${why}`);
    }
    return c;
  }

  async focus(p: FocusParams): Promise<void> {
    return this.live(Methods.focus).focus(p);
  }

  /**
   * Ends the agentd that owns the sessions (the per-user daemon, every
   * window's; -32040 while sessions run, unless `force`), then connects
   * again, which starts a new, empty one.
   */
  async stopDaemon(force: boolean): Promise<void> {
    const c = this.live(Methods.stop);
    await c.stopDaemon(force);
    await c.exited;
    await this.restart();
  }
}

/** The daemon that owns the sessions, as initialize told it: its version, and whether it is this binary's build. */
export function describeDaemon(client: AgentdClient): string {
  const d = client.info.daemon;
  if (!d) return 'no daemon (this agentd predates them)';
  const mine = client.info.serverInfo.version;
  const kind = d.private ? 'private agentd' : 'daemon';
  const same = mine && d.version === mine ? ', the same build' : mine ? `, another build than this agentd's ${mine}` : '';
  return `its ${kind}: version ${d.version} (pid ${d.pid}, protocol ${d.protocolVersion}${same})`;
}
