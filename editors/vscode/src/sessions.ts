// The state model: what the editor knows about each session, merged from
// spawn/list snapshots and session/state notifications. Nothing here imports
// `vscode`; the status bar, the tree and the notices all read from it.
import { Emitter } from 'vscode-jsonrpc/node';

import { ExitedNotification, Session, StateName, StateNotification, STATES } from './protocol';

export type Counts = Record<StateName, number>;

/** What changed: one session (with the notification, if one caused it), or everything. */
export interface StoreChange {
  sessionId?: string;
  previous?: StateName;
  notification?: StateNotification;
}

function time(since: string | undefined): number {
  const t = since ? Date.parse(since) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly changeEmitter = new Emitter<StoreChange>();
  readonly onDidChange = this.changeEmitter.event;

  get(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  /** Sessions in the order they were first seen (rows do not jump around). */
  all(): Session[] {
    return [...this.sessions.values()];
  }

  live(): Session[] {
    return this.all().filter((s) => s.state !== 'exited');
  }

  /**
   * Merges a snapshot (from spawn or list). A notification may have arrived
   * before the spawn answer did; the newer state wins, by `since`.
   */
  upsert(s: Session): void {
    const old = this.sessions.get(s.sessionId);
    if (!old) {
      this.sessions.set(s.sessionId, { ...s });
      this.changeEmitter.fire({ sessionId: s.sessionId });
      return;
    }
    const keepState = time(old.since) >= time(s.since) || old.state === 'exited';
    const merged: Session = keepState
      ? { ...s, state: old.state, outcome: old.outcome, stateSource: old.stateSource, reason: old.reason, since: old.since, prompt: old.prompt, message: old.message, exit: old.exit ?? s.exit }
      : { ...s };
    if (old.name && !s.name) merged.name = old.name;
    this.sessions.set(s.sessionId, merged);
    this.changeEmitter.fire({ sessionId: s.sessionId, previous: old.state });
  }

  /** Applies a session/state notification; unknown sessions get a provisional entry. */
  applyState(n: StateNotification): void {
    const old = this.sessions.get(n.sessionId);
    const base: Session = old ?? {
      sessionId: n.sessionId,
      name: '',
      agent: n.agent,
      argv: [],
      cwd: '',
      pid: 0,
      cols: 0,
      rows: 0,
      state: n.state,
      stateSource: n.stateSource,
      reason: n.reason,
      since: n.since,
    };
    const next: Session = {
      ...base,
      agent: n.agent || base.agent,
      state: n.state,
      outcome: n.outcome,
      stateSource: n.stateSource,
      reason: n.reason,
      since: n.since,
      prompt: n.state === 'blocked' ? (n.prompt ?? null) : null,
      message: n.message,
    };
    this.sessions.set(n.sessionId, next);
    this.changeEmitter.fire({ sessionId: n.sessionId, previous: old?.state, notification: n });
  }

  applyExited(n: ExitedNotification): void {
    const old = this.sessions.get(n.sessionId);
    if (!old) return;
    const exit = { exitCode: n.exitCode, signal: n.signal };
    this.sessions.set(n.sessionId, { ...old, state: 'exited', prompt: null, exit });
    this.changeEmitter.fire({ sessionId: n.sessionId, previous: old.state });
  }

  /** agentd went away: its sessions ended with it. */
  markAllExited(reason: string, now = new Date()): void {
    let changed = false;
    for (const [id, s] of this.sessions) {
      if (s.state === 'exited') continue;
      this.sessions.set(id, { ...s, state: 'exited', stateSource: 'process', reason, since: now.toISOString(), prompt: null, outcome: undefined });
      changed = true;
    }
    if (changed) this.changeEmitter.fire({});
  }

  /** Forgets every session (a new agentd reuses ids). */
  clear(): void {
    if (this.sessions.size === 0) return;
    this.sessions.clear();
    this.changeEmitter.fire({});
  }

  remove(sessionId: string): void {
    if (this.sessions.delete(sessionId)) this.changeEmitter.fire({ sessionId });
  }

  /** Forgets exited sessions; returns how many. */
  clearExited(): number {
    let n = 0;
    for (const [id, s] of this.sessions) {
      if (s.state === 'exited') {
        this.sessions.delete(id);
        n++;
      }
    }
    if (n) this.changeEmitter.fire({});
    return n;
  }

  counts(): Counts {
    const c = Object.fromEntries(STATES.map((s) => [s, 0])) as Counts;
    for (const s of this.sessions.values()) c[s.state]++;
    return c;
  }

  /** Blocked sessions, the one waiting longest first. */
  blocked(): Session[] {
    return this.all()
      .filter((s) => s.state === 'blocked')
      .sort((a, b) => time(a.since) - time(b.since));
  }

  /** The prompt waiting longest: where a click on the badge goes. */
  longestBlocked(): Session | undefined {
    return this.blocked()[0];
  }
}

/** What the status bar reads: one store, or every host's. */
export interface SessionSource {
  readonly onDidChange: SessionStore['onDidChange'];
  all(): Session[];
  live(): Session[];
  counts(): Counts;
  blocked(): Session[];
  longestBlocked(): Session | undefined;
  /** The host a session (as all() gave it) runs on, when there are several. */
  hostOf?(s: Session): string | undefined;
}

/**
 * Every host's sessions as one: counts, the blocked ones (waiting longest
 * first, whichever host), each session's host. With one host it is that
 * host's store.
 */
export class AllSessions implements SessionSource {
  private readonly parts: Array<{ host: string; store: SessionStore }> = [];
  private readonly changeEmitter = new Emitter<StoreChange>();
  readonly onDidChange = this.changeEmitter.event;

  constructor(host: string, store: SessionStore) {
    this.add(host, store);
  }

  add(host: string, store: SessionStore): void {
    this.parts.push({ host, store });
    store.onDidChange((c) => this.changeEmitter.fire(c));
    if (this.parts.length > 1) this.changeEmitter.fire({});
  }

  /** Renames a host (this machine's name comes from config.toml). */
  rename(from: string, to: string): void {
    const p = this.parts.find((x) => x.host === from);
    if (p) p.host = to;
  }

  get multi(): boolean {
    return this.parts.length > 1;
  }

  hosts(): Array<{ host: string; store: SessionStore }> {
    return [...this.parts];
  }

  all(): Session[] {
    return this.parts.flatMap((p) => p.store.all());
  }

  live(): Session[] {
    return this.all().filter((s) => s.state !== 'exited');
  }

  counts(): Counts {
    const c = Object.fromEntries(STATES.map((s) => [s, 0])) as Counts;
    for (const s of this.all()) c[s.state]++;
    return c;
  }

  blocked(): Session[] {
    return this.all()
      .filter((s) => s.state === 'blocked')
      .sort((a, b) => time(a.since) - time(b.since));
  }

  longestBlocked(): Session | undefined {
    return this.blocked()[0];
  }

  /** Found by the object itself: ids repeat across hosts, the objects do not. */
  hostOf(s: Session): string | undefined {
    if (!this.multi) return undefined;
    return this.parts.find((p) => p.store.get(s.sessionId) === s)?.host;
  }

  /** The store of a host. */
  storeOf(host: string): SessionStore | undefined {
    return this.parts.find((p) => p.host === host)?.store;
  }
}
