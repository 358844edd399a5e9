// Holds the extension's state and wires agentd's notifications to the model
// and the model to the views.
import * as vscode from 'vscode';

import { Config, needsRestart, readConfig } from './config';
import { Prompts } from './prompts';
import { SessionStore } from './sessions';
import { SessionsView } from './sessions_view';
import { StatusDisplay } from './status_display';
import { Status, Supervisor } from './supervisor';
import { Terminals } from './terminals';

export class Ctx implements vscode.Disposable {
  readonly store = new SessionStore();
  readonly output: vscode.OutputChannel;
  readonly agentd: Supervisor;
  readonly terminals: Terminals;
  readonly prompts: Prompts;
  readonly status: StatusDisplay;
  readonly view: SessionsView;
  config: Config = readConfig();
  private agents = new Set<string>();
  private started = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(ext: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('agentd');
    this.agentd = new Supervisor(
      () => ({
        path: this.config.path,
        args: ['--cooldown', this.config.cooldown],
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
        clientInfo: { name: 'vscode', version: `${vscode.version}; agentd-vscode ${ext.extension.packageJSON.version}` },
        log: (line) => this.output.appendLine(line),
        trace: this.config.trace,
      }),
      { log: (line) => this.output.appendLine(line) },
    );
    this.terminals = new Terminals(this.agentd, this.store, (l) => this.log(l), (id) => this.markSeen(id));
    this.prompts = new Prompts(this.agentd, this.store, () => this.config, (id) => this.openTerminal(id));
    this.status = new StatusDisplay(this.store, this.agentd.onDidChangeStatus);
    this.view = new SessionsView(this.store);
    this.disposables.push(
      this.output,
      this.terminals,
      this.status,
      this.view,
      this.agentd.onState((n) => {
        this.store.applyState(n);
        this.prompts.onState(n);
      }),
      this.agentd.onExited((n) => this.store.applyExited(n)),
      this.agentd.onDidStart((client) => {
        this.agents = new Set(client.info.agents.map((a) => a.name));
        // Sessions of an earlier agentd died with it, and their ids will be reused.
        this.terminals.allEnded('agentd stopped, and this session ended with it.');
        this.store.clear();
        this.refresh().catch((e: Error) => this.log(`[client] session/list: ${e.message}`));
      }),
      this.agentd.onDidChangeStatus((s) => this.statusChanged(s)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('agentd')) return;
        this.config = readConfig();
        if (needsRestart(e)) void this.offerRestart();
      }),
    );
  }

  log(line: string): void {
    this.output.appendLine(`${line}`);
  }

  async start(): Promise<void> {
    await this.agentd.start();
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
    if (s.kind === 'stopped') {
      this.terminals.allEnded('agentd was stopped, and this session ended with it.');
      this.store.markAllExited('agentd.stopped');
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
        const buttons = s.notFound ? ['Open Settings', 'Show Log'] : ['Restart agentd', 'Show Log'];
        void vscode.window.showErrorMessage(`${s.message}${ended}`, ...buttons).then((b) => {
          if (b === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.path');
          else if (b === 'Restart agentd') void this.agentd.restart();
          else if (b === 'Show Log') this.output.show(true);
        });
      }
    }
  }

  private async offerRestart(): Promise<void> {
    const live = this.store.live().length;
    if (live === 0 || this.agentd.status.kind !== 'running') {
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
    await this.agentd.stop().catch(() => undefined);
    for (const d of this.disposables) d.dispose();
  }
}
