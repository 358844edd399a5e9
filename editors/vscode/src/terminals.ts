// A session in a VS Code terminal: a Pseudoterminal fed by session/output
// (a repaint, then live output), whose keystrokes go back as session/input
// and whose size is the session's. Focusing it marks the session seen.
import * as vscode from 'vscode';

import { Agentd } from './client';
import { agentIcon, sessionName } from './format';
import { Session, SpawnParams } from './protocol';
import { SessionStore } from './sessions';

const note = (text: string) => `\r\n\x1b[2m[agentd] ${text}\x1b[0m\r\n`;

/** Usable terminal dimensions, or undefined (a hidden terminal may report 0×0). */
function size(d: vscode.TerminalDimensions | undefined): { cols: number; rows: number } | undefined {
  return d && d.columns >= 2 && d.rows >= 2 ? { cols: d.columns, rows: d.rows } : undefined;
}

export class SessionPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  readonly onDidWrite = this.writeEmitter.event;
  private watch: { dispose(): void } | undefined;
  private closed = false;
  private sessionId: string | undefined;
  private started = false;
  private dims: { cols: number; rows: number } | undefined;

  /**
   * Shows `session`: an existing session id, or a function that starts one
   * at the size the terminal opens with (so the agent draws for it from the start).
   */
  constructor(
    private readonly agentd: Agentd,
    private readonly session: string | ((size: { cols: number; rows: number } | undefined) => Promise<string>),
    private readonly log: (line: string) => void,
  ) {}

  open(initial: vscode.TerminalDimensions | undefined): void {
    void this.attach(size(initial));
  }

  /** Starts without dimensions if VS Code has not opened the terminal by now. */
  openLate(): void {
    void this.attach(undefined);
  }

  private async attach(sz: { cols: number; rows: number } | undefined): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.dims = sz;
    try {
      if (typeof this.session === 'string') {
        this.sessionId = this.session;
        // Resize first, so the repaint that subscribe queues has the view's size.
        if (sz) await this.agentd.resize({ sessionId: this.sessionId, ...sz });
      } else {
        this.sessionId = await this.session(sz);
      }
      const w = await this.agentd.watchOutput(this.sessionId, (n) => this.writeEmitter.fire(n.data));
      if (this.closed) w.dispose();
      else this.watch = w;
    } catch (e) {
      this.writeEmitter.fire(note(`${(e as Error).message}`));
    }
  }

  close(): void {
    this.closed = true;
    this.watch?.dispose();
    this.watch = undefined;
  }

  handleInput(data: string): void {
    if (!this.sessionId) return;
    this.agentd.input({ sessionId: this.sessionId, data }).catch((e: Error) => {
      this.log(`[client] session/input ${this.sessionId}: ${e.message}`);
      this.writeEmitter.fire(note(`your keys were not delivered: ${e.message}`));
    });
  }

  /**
   * A new connection to the daemon: watch the session again. Its repaint
   * redraws the screen as it is now, and live output follows.
   */
  async reattach(): Promise<void> {
    if (this.closed || !this.sessionId) return;
    this.watch = undefined; // the old connection's, gone with it
    try {
      if (this.dims) await this.agentd.resize({ sessionId: this.sessionId, ...this.dims });
      const w = await this.agentd.watchOutput(this.sessionId, (n) => this.writeEmitter.fire(n.data));
      if (this.closed) w.dispose();
      else this.watch = w;
    } catch (e) {
      this.writeEmitter.fire(note(`${(e as Error).message}`));
    }
  }

  setDimensions(d: vscode.TerminalDimensions): void {
    const sz = size(d);
    if (sz) this.dims = sz;
    if (!sz || !this.sessionId) return;
    this.agentd.resize({ sessionId: this.sessionId, ...sz }).catch((e: Error) => this.log(`[client] session/resize ${this.sessionId}: ${e.message}`));
  }

  /** Leaves the terminal open with a last line, so the final screen can still be read. */
  ended(text: string): void {
    this.watch?.dispose();
    this.watch = undefined;
    // At the bottom, below whatever the agent left on screen.
    this.writeEmitter.fire(`\x1b[0m\x1b[999;1H\x1b[?25h${note(text)}`);
  }
}

export class Terminals implements vscode.Disposable {
  private readonly byId = new Map<string, { terminal: vscode.Terminal; pty: SessionPty }>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly agentd: Agentd,
    private readonly store: SessionStore,
    private readonly log: (line: string) => void,
    private readonly markSeen: (sessionId: string) => void,
    /** Told the sessions with a terminal open whenever that changes, so a reload can reopen them. */
    private readonly remember: (sessionIds: string[]) => void = () => undefined,
    /** The host the sessions run on, in each terminal's name when the window shows several hosts. */
    public host?: string,
  ) {
    this.disposables.push(
      vscode.window.onDidCloseTerminal((t) => {
        for (const [id, e] of this.byId) if (e.terminal === t) this.byId.delete(id);
        this.changed();
      }),
      vscode.window.onDidChangeActiveTerminal((t) => this.looked(t)),
      vscode.window.onDidChangeWindowState((w) => w.focused && this.looked(vscode.window.activeTerminal)),
      agentd.onExited((n) => {
        const s = this.store.get(n.sessionId);
        const how = n.signal ? `was ended by ${n.signal}` : `exited with code ${n.exitCode}`;
        this.byId.get(n.sessionId)?.pty.ended(`${s ? sessionName(s) : n.sessionId} ${how}.`);
      }),
    );
  }

  /** The session shown in a terminal, if any. */
  sessionOf(t: vscode.Terminal | undefined): string | undefined {
    for (const [id, e] of this.byId) if (e.terminal === t) return id;
    return undefined;
  }

  has(sessionId: string): boolean {
    return this.byId.has(sessionId);
  }

  /** Shows the session's terminal, creating it the first time. */
  show(s: Session, preserveFocus = false): vscode.Terminal {
    let e = this.byId.get(s.sessionId);
    if (!e) {
      const pty = new SessionPty(this.agentd, s.sessionId, this.log);
      e = { terminal: this.create(this.host ? `${sessionName(s)} on ${this.host}` : sessionName(s), s.agent, pty), pty };
      this.byId.set(s.sessionId, e);
      this.changed();
    }
    e.terminal.show(preserveFocus);
    if (!preserveFocus) this.markSeen(s.sessionId);
    return e.terminal;
  }

  /**
   * Opens a terminal and starts the session in it, sized to it. Resolves with
   * the session (already in the store), or rejects when agentd refused it.
   */
  spawn(params: SpawnParams, icon: string): Promise<Session> {
    return new Promise<Session>((resolve, reject) => {
      const pty = new SessionPty(
        this.agentd,
        async (sz) => {
          try {
            const s = await this.agentd.spawn({ ...params, ...sz });
            this.store.upsert(s);
            this.byId.set(s.sessionId, { terminal, pty });
            this.changed();
            resolve(s);
            return s.sessionId;
          } catch (e) {
            reject(e);
            throw e;
          }
        },
        this.log,
      );
      const terminal = this.create(params.name ?? params.argv[0], undefined, pty, icon);
      terminal.show();
      setTimeout(() => pty.openLate(), 5000);
    });
  }

  private create(name: string, agent: string | undefined, pty: SessionPty, icon?: string): vscode.Terminal {
    return vscode.window.createTerminal({
      name: `${name} (agentd)`,
      pty,
      iconPath: new vscode.ThemeIcon(icon ?? agentIcon(agent ?? '')),
    });
  }

  /** agentd went away: every terminal says so, and forgets its session (ids are reused). */
  allEnded(text: string): void {
    for (const [id, e] of this.byId) if (this.store.get(id)?.state !== 'exited') e.pty.ended(text);
    if (this.byId.size) {
      this.byId.clear();
      this.changed();
    }
  }

  /** A new connection to the same daemon: every terminal watches its session again. */
  reattach(): void {
    for (const [id, e] of this.byId) {
      if (this.store.get(id)?.state === 'exited') continue;
      void e.pty.reattach();
    }
  }

  private changed(): void {
    this.remember([...this.byId.keys()]);
  }

  private looked(t: vscode.Terminal | undefined): void {
    const id = this.sessionOf(t);
    if (id && vscode.window.state.focused) this.markSeen(id);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
