// Holds the extension's state and wires agentd's notifications to the model
// and the model to the views. The sessions belong to agentd's per-user
// daemon, not to this window: a reload, a crash of the extension host or a
// restart of the forwarder ends none of them, and the window finds them
// again (and reopens their terminals) when it connects. Only a daemon that
// went away takes sessions with it, and then the window says which.
import * as vscode from 'vscode';

import { Config, needsRestart, readConfig } from './config';
import { sessionName, stateLabel } from './format';
import { FocusReporter } from './focus';
import { configuredHosts, HostConnection, HostState } from './hosts';
import { describeBinary, locate } from './locate';
import { Agentd, ClientOptions } from './client';
import { InitializeResult } from './protocol';
import { Prompts } from './prompts';
import { AllSessions, SessionStore } from './sessions';
import { HostGroup, SessionsView } from './sessions_view';
import { StatusDisplay } from './status_display';
import { SubjectDocs } from './subject_view';
import { describeDaemon, Status, Supervisor } from './supervisor';
import { Terminals } from './terminals';

/** One host's sessions and the things that act on them, all bound to that host's connection. */
export interface HostBundle {
  name: string;
  local: boolean;
  agentd: Agentd;
  store: SessionStore;
  prompts: Prompts;
  terminals: Terminals;
  markSeen(sessionId: string): void;
  openTerminal(sessionId: string): void;
}

/** Another host's bundle, with its connection. */
interface RemoteHost extends HostBundle {
  conn: HostConnection;
  /** Its daemon as last connected: a new one has none of the old sessions. */
  instance?: string;
}

export class Ctx implements vscode.Disposable {
  readonly store = new SessionStore();
  /** Every host's sessions, for the status bar (this machine's only, unless several hosts are configured). */
  readonly all: AllSessions;
  /** This machine's name among several hosts ("local" unless config.toml names it). */
  localName = 'local';
  /** The other hosts (config.toml's [[hosts]]); none when only this machine is configured. */
  readonly remotes: RemoteHost[] = [];
  readonly output: vscode.OutputChannel;
  readonly agentd: Supervisor;
  readonly terminals: Terminals;
  readonly prompts: Prompts;
  /** What a prompt approves, opened whole: the diff editor, the command. */
  readonly subjects: SubjectDocs;
  readonly status: StatusDisplay;
  /** Tells agentd whether this window has the focus (client/focus). */
  readonly focus: FocusReporter;
  readonly view: SessionsView;
  config: Config = readConfig();
  private agents = new Set<string>();
  private started = false;
  /** The daemon this window is connected to; a new instance has none of the old sessions. */
  private instance: string | undefined;
  /** A person stopped the daemon: its sessions ended on purpose, not news. */
  private stoppingDaemon = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly ext: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('agentd');
    this.agentd = new Supervisor(
      () => this.clientOptions(),
      {
        log: (line) => this.output.appendLine(line),
        locate: () => locate({ setting: this.config.path, extensionPath: ext.extensionPath, env: process.env }),
      },
    );
    this.terminals = new Terminals(this.agentd, this.store, (l) => this.log(l), (id) => this.markSeen(id), (ids) => this.rememberTerminals(ids));
    this.subjects = new SubjectDocs();
    this.prompts = new Prompts(this.agentd, this.store, () => this.config, (id) => this.openTerminal(id), this.subjects);
    this.all = new AllSessions(this.localName, this.store);
    this.status = new StatusDisplay(this.all, this.agentd.onDidChangeStatus);
    this.focus = new FocusReporter(this.agentd, vscode.window.state.focused, this.config.desktopNotifications, (l) => this.log(l));
    this.view = new SessionsView(this.store, undefined, () => (this.remotes.length ? this.hostGroups() : undefined));
    this.disposables.push(
      this.output,
      this.subjects,
      this.terminals,
      this.status,
      this.view,
      this.agentd.onState((n) => {
        this.store.applyState(n);
        this.prompts.onState(n);
      }),
      this.agentd.onExited((n) => this.store.applyExited(n)),
      this.agentd.onDidStart((client) => {
        this.focus.connected();
        void this.connected(client.info);
      }),
      vscode.window.onDidChangeWindowState((w) => this.focus.setFocused(w.focused)),
      this.agentd.onDidChangeStatus((s) => {
        this.statusChanged(s);
        if (this.remotes.length) this.view.refresh();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('agentd')) return;
        this.config = readConfig();
        this.focus.setDesktop(this.config.desktopNotifications);
        if (e.affectsConfiguration('agentd.path')) this.tellPathNote();
        if (needsRestart(e)) void this.offerRestart();
      }),
    );
  }

  log(line: string): void {
    this.output.appendLine(`${line}`);
  }

  /** How agentd is started: for this machine's sidecar, and (with --host NAME --no-start added) for each other host's. */
  private clientOptions(): ClientOptions {
    return {
      // locate() replaces it with what it finds: agentd.path, the bundled agentd, PATH.
      path: this.config.path || 'agentd',
      args: ['--cooldown', this.config.cooldown, ...(this.config.private ? ['--private'] : []), ...this.config.pathArgs],
      cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      clientInfo: { name: 'vscode', version: `${vscode.version}; agentd-vscode ${this.ext.extension.packageJSON.version}` },
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      log: (line) => this.output.appendLine(line),
      trace: this.config.trace,
    };
  }

  async start(): Promise<void> {
    this.tellPathNote();
    await this.agentd.start();
    await this.startHosts();
  }

  /**
   * Several hosts configured (agentd hosts --configured): a connection per
   * other host, and the view groups sessions by host. With this machine
   * alone nothing changes.
   */
  private async startHosts(): Promise<void> {
    const st = this.agentd.status;
    if (st.kind === 'failed' && st.notFound) return;
    const path = this.agentd.binary?.path ?? (this.config.path || 'agentd');
    const hosts = await configuredHosts(path, process.env, (l) => this.log(l));
    const others = hosts.filter((h) => !h.local);
    if (!others.length) return;
    const local = hosts.find((h) => h.local);
    if (local) {
      this.all.rename(this.localName, local.name);
      this.localName = local.name;
    }
    this.prompts.host = this.localName;
    this.terminals.host = this.localName;
    this.log(`[client] hosts: ${this.localName} (this machine), ${others.map((h) => h.name).join(', ')}`);
    for (const h of others) this.addHost(h.name);
    this.view.refresh();
    await Promise.all(this.remotes.map((r) => r.conn.start()));
  }

  private addHost(name: string): void {
    const conn = new HostConnection(name, {
      clientOptions: () => ({ ...this.clientOptions(), path: this.agentd.binary?.path ?? (this.config.path || 'agentd') }),
      log: (l) => this.log(l),
    });
    const store = new SessionStore();
    const r = {
      name,
      local: false,
      conn,
      agentd: conn,
      store,
      markSeen: (id: string) => {
        if (store.get(id)?.state !== 'done') return;
        conn.seen(id).catch((e: Error) => this.log(`[host ${name}] session/seen ${id}: ${e.message}`));
      },
      openTerminal: (id: string) => {
        const s = store.get(id);
        if (s) r.terminals.show(s);
      },
    } as unknown as RemoteHost;
    r.terminals = new Terminals(conn, store, (l) => this.log(l), (id) => r.markSeen(id), () => undefined, name);
    r.prompts = new Prompts(conn, store, () => this.config, (id) => r.openTerminal(id), this.subjects, name);
    this.remotes.push(r);
    this.all.add(name, store);
    this.view.watch(store);
    this.disposables.push(
      r.terminals,
      conn.onState((n) => {
        store.applyState(n);
        r.prompts.onState(n);
      }),
      conn.onExited((n) => store.applyExited(n)),
      conn.onDidConnect((client) => void this.hostConnected(r, client.info)),
      conn.onDidChangeState(() => this.view.refresh()),
    );
  }

  /**
   * Another host's connection was made (again): to the daemon it knew (its
   * sessions and terminals carry on) or to a new one there (the sessions
   * known of the old one are gone, and their terminals say so).
   */
  private async hostConnected(r: RemoteHost, info: InitializeResult): Promise<void> {
    const instance = info.daemon?.instance;
    const same = !!instance && instance === r.instance;
    const first = r.instance === undefined;
    r.instance = instance;
    let sessions;
    try {
      sessions = await r.conn.list();
    } catch (e) {
      this.log(`[host ${r.name}] session/list: ${(e as Error).message}`);
      return;
    }
    if (!same) {
      if (!first) r.terminals.allEnded(`host ${r.name}'s daemon stopped, and this session ended with it.`);
      r.store.clear();
    }
    for (const s of sessions) r.store.upsert(s);
    for (const s of r.store.live()) if (!sessions.some((x) => x.sessionId === s.sessionId)) r.store.applyExited({ sessionId: s.sessionId, exitCode: -1 });
    if (same) r.terminals.reattach();
  }

  /** Every host as the view shows it (several configured). */
  hostGroups(): HostGroup[] {
    return [
      { name: this.localName, local: true, store: this.store, state: this.localState() },
      ...this.remotes.map((r) => ({ name: r.name, local: false, store: r.store, state: r.conn.state })),
    ];
  }

  /** This machine's connection as a host's state. */
  private localState(): HostState {
    const st = this.agentd.status;
    switch (st.kind) {
      case 'running':
        return { kind: 'up' };
      case 'starting':
        return { kind: 'connecting' };
      case 'restarting':
        return { kind: 'reconnecting', message: st.reason, retryMs: st.delayMs };
      case 'failed':
        return { kind: 'down', message: st.message, retryMs: 0 };
      case 'stopped':
        return { kind: 'down', message: 'agentd is stopped', retryMs: 0 };
    }
  }

  /** Whether the window shows several hosts. */
  get multi(): boolean {
    return this.remotes.length > 0;
  }

  /** This machine's bundle. */
  get localHost(): HostBundle {
    return {
      name: this.localName,
      local: true,
      agentd: this.agentd,
      store: this.store,
      prompts: this.prompts,
      terminals: this.terminals,
      markSeen: (id) => this.markSeen(id),
      openTerminal: (id) => this.openTerminal(id),
    };
  }

  /** Every host's bundle, this machine's first. */
  bundles(): HostBundle[] {
    return [this.localHost, ...this.remotes];
  }

  /** The bundle of a host by name; this machine's for none. */
  bundle(host: string | undefined): HostBundle | undefined {
    if (host === undefined || host === this.localName) return this.localHost;
    return this.remotes.find((r) => r.name === host);
  }

  /** An agentd.path with --stdio runs without it; the person is told the right form. */
  private tellPathNote(): void {
    const note = this.config.pathNote;
    if (!note) return;
    this.log(`[client] ${note}`);
    void vscode.window.showWarningMessage(note, 'Open Settings').then((b) => {
      if (b) void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.path');
    });
  }

  /** Names of the agents agentd has rules for (from initialize). */
  knownAgents(): Set<string> {
    return this.agents;
  }

  /** Reloads the session list from agentd. */
  async refresh(): Promise<void> {
    const sessions = await this.agentd.list();
    for (const s of sessions) this.store.upsert(s);
  }

  /** Reloads every host's session list (the hosts that are connected). */
  async refreshAll(): Promise<void> {
    await this.refresh();
    for (const r of this.remotes) {
      if (!r.conn.client) continue;
      const sessions = await r.conn.list().catch((e: Error) => {
        this.log(`[host ${r.name}] session/list: ${e.message}`);
        return [];
      });
      for (const s of sessions) r.store.upsert(s);
    }
  }

  /**
   * A connection was made: to the daemon this window knew (its sessions
   * live on; the terminals take a repaint), or to a new one (the sessions
   * the window knew ended with the old daemon: say which).
   */
  private async connected(info: InitializeResult): Promise<void> {
    this.agents = new Set(info.agents.map((a) => a.name));
    for (const w of info.warnings ?? []) void vscode.window.showWarningMessage(`agentd: ${w}`);
    const instance = info.daemon?.instance;
    const first = this.instance === undefined;
    const same = !!instance && instance === this.instance && !info.daemon?.private;
    const knew = this.store.live();
    this.instance = instance;
    if (same) {
      await this.refresh().catch((e: Error) => this.log(`[client] session/list: ${e.message}`));
      for (const s of knew) if (!this.store.all().some((x) => x.sessionId === s.sessionId && x.state !== 'exited')) this.store.applyExited({ sessionId: s.sessionId, exitCode: -1 });
      this.terminals.reattach();
      return;
    }
    // Session ids of another agentd are other sessions.
    this.terminals.allEnded("agentd's daemon stopped, and this session ended with it.");
    this.store.clear();
    if (!first && knew.length && !this.stoppingDaemon) {
      const names = knew.map((s) => `${sessionName(s)} (${s.sessionId})`).join(', ');
      void vscode.window
        .showWarningMessage(`agentd's daemon stopped; ${knew.length === 1 ? 'this session' : `these ${knew.length} sessions`} ended with it: ${names}.`, 'Show Log')
        .then((b) => b && this.output.show(true));
    }
    this.stoppingDaemon = false;
    await this.refresh().catch((e: Error) => this.log(`[client] session/list: ${e.message}`));
    if (first) this.restoreTerminals();
    this.tellWaiting();
  }

  /** Prompts already waiting when the window connects raised their notices before it was there. */
  private tellWaiting(): void {
    const waiting = this.store.blocked();
    if (!waiting.length || !this.config.notify.blocked) return;
    const names = waiting.map((s) => sessionName(s)).join(', ');
    void vscode.window
      .showWarningMessage(`${waiting.length === 1 ? 'An agent waits' : `${waiting.length} agents wait`} for you: ${names}.`, 'Answer')
      .then((b) => b && this.prompts.answerLongestWaiting());
  }

  /** The terminals open in this window, kept so a reload can reopen them. */
  private rememberTerminals(ids: string[]): void {
    void this.ext.workspaceState.update('agentd.openTerminals', { instance: this.instance, ids });
  }

  /** After a reload: reopens the terminals that were open, on the session's current screen. */
  private restoreTerminals(): void {
    const saved = this.ext.workspaceState.get<{ instance?: string; ids?: string[] }>('agentd.openTerminals');
    if (!saved?.ids?.length || saved.instance !== this.instance) return;
    for (const id of saved.ids) {
      const s = this.store.get(id);
      if (s && s.state !== 'exited') this.terminals.show(s, true);
    }
  }

  /**
   * Ends the daemon (every window's sessions): asks first, naming the
   * sessions that still run.
   */
  async stopDaemon(): Promise<void> {
    const live = this.store.live();
    if (live.length) {
      const names = live.map((s) => `${sessionName(s)} (${s.sessionId}, ${stateLabel(s)})`).join(', ');
      const b = await vscode.window.showWarningMessage(
        `Stop agentd's daemon? It ends ${live.length === 1 ? 'this session' : `these ${live.length} sessions`}, in every window: ${names}.`,
        { modal: true },
        'Stop the Daemon and End Them',
      );
      if (!b) return;
    }
    this.stoppingDaemon = true;
    try {
      await this.agentd.stopDaemon(true);
    } catch (e) {
      this.stoppingDaemon = false;
      throw e;
    }
  }

  /**
   * agentd: Show Version — the binary (and where it was found), its
   * version, and the version of the daemon that owns the sessions; also
   * written to the log.
   */
  async showVersion(): Promise<void> {
    const bin = this.agentd.binary;
    const client = this.agentd.client;
    const parts = [bin ? describeBinary(bin) : 'agentd: not found yet'];
    if (client) parts.push(describeDaemon(client));
    else parts.push(`not running (${this.agentd.status.kind === 'failed' ? this.agentd.status.message : this.agentd.status.kind})`);
    parts.push(`extension agentd-vscode ${this.ext.extension.packageJSON.version}`);
    const text = parts.join('; ') + '.';
    this.log(`[client] ${text}`);
    const b = await vscode.window.showInformationMessage(text, 'Show Log');
    if (b) this.output.show(true);
  }

  openTerminal(sessionId: string): void {
    const s = this.store.get(sessionId);
    if (s) this.terminals.show(s);
  }

  /** The person looked at a finished turn: agentd turns done into idle. */
  markSeen(sessionId: string): void {
    if (this.store.get(sessionId)?.state !== 'done') return;
    this.agentd.seen(sessionId).catch((e: Error) => this.log(`[client] session/seen ${sessionId}: ${e.message}`));
  }

  private statusChanged(s: Status): void {
    if (s.kind === 'running') {
      if (this.started) vscode.window.setStatusBarMessage('$(check) agentd is running again', 5000);
      this.started = true;
      return;
    }
    const daemon = !this.config.private;
    if (s.kind === 'stopped') {
      // Through the daemon nothing ended: the next connection takes the
      // terminals and the sessions up again (connected()).
      if (daemon) return;
      this.terminals.allEnded('agentd was stopped, and this session ended with it.');
      this.store.markAllExited('agentd.stopped');
      return;
    }
    if (s.kind === 'restarting' && daemon) {
      // Maybe only the connection went; the daemon and its sessions may be
      // fine. connected() says which ended once the window is back.
      this.log(`[client] ${s.reason}; connecting again in ${Math.round(s.delayMs / 1000)} s`);
      return;
    }
    if (s.kind === 'restarting' || s.kind === 'failed') {
      const lost = this.store.live().length;
      this.terminals.allEnded('agentd stopped, and this session ended with it.');
      this.store.markAllExited('agentd.stopped');
      const ended = lost ? ` Its ${lost} session${lost > 1 ? 's' : ''} ended.` : '';
      if (s.kind === 'restarting') {
        if (s.attempt === 1 || lost) {
          void vscode.window
            .showWarningMessage(`${s.reason}; restarting it in ${Math.round(s.delayMs / 1000)} s.${ended}`, 'Show Log')
            .then((b) => b && this.output.show(true));
        }
      } else {
        // agentd that never started: its settings are the likely cause, and
        // a retry (once they are fixed) starts it; the log has all it printed.
        const buttons = s.notFound ? ['Open Settings', 'Show Log'] : s.startup ? ['Show Log', 'Open Settings', 'Retry'] : ['Restart agentd', 'Show Log'];
        void vscode.window.showErrorMessage(`${s.message}${ended}`, ...buttons).then((b) => {
          if (b === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.path');
          else if (b === 'Restart agentd' || b === 'Retry') void this.agentd.restart();
          else if (b === 'Show Log') this.output.show(true);
        });
      }
    }
  }

  private async offerRestart(): Promise<void> {
    const live = this.store.live().length;
    // Through the daemon a restart is only a new connection: nothing ends.
    if (live === 0 || this.agentd.status.kind !== 'running' || (!this.config.private && this.agentd.client?.private === false)) {
      await this.agentd.restart();
      return;
    }
    const b = await vscode.window.showInformationMessage(
      `agentd's settings changed. Restart agentd to use them? Its ${live} running session${live > 1 ? 's' : ''} will end.`,
      'Restart agentd',
    );
    if (b) await this.agentd.restart();
  }

  async dispose(): Promise<void> {
    await Promise.all(this.remotes.map((r) => r.conn.stop().catch(() => undefined)));
    await this.agentd.stop().catch(() => undefined);
    for (const d of this.disposables) d.dispose();
  }
}
