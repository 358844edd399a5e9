// The Sessions view: one row per session (agent icon coloured by state, name,
// state, how long), and under a blocked session its question and what it
// approves (the command, the file; a click opens the diff). The daemon's
// sessions in this workspace come first; sessions started elsewhere (another
// window, Neovim, the agentd CLI) follow, grouped by their folder. Context
// actions come from package.json menus keyed on `contextValue`.
import * as vscode from 'vscode';

import { age, agentIcon, diffFiles, mdCodeBlock, mdEscape, oneLine, promptText, sessionName, stateLabel, subjectAction, subjectLine, unreadable } from './format';
import { Session, StateName, Subject } from './protocol';
import { HostState, hostStateLabel } from './hosts';
import { SessionStore } from './sessions';

/** A host as the view shows it, when the window shows several. */
export interface HostGroup {
  name: string;
  local: boolean;
  store: SessionStore;
  state: HostState;
}

/** A tree element: a session row, the question and subject rows under a blocked session, or a folder of other sessions. */
export interface Node {
  sessionId: string;
  question?: boolean;
  /** The row under the question: what the prompt approves. */
  subject?: boolean;
  /** A group row: the sessions working in this folder, outside the workspace. */
  folder?: string;
  /** The host the session (or folder) is on, when the window shows several; with hostGroup, the host's row. */
  host?: string;
  hostGroup?: boolean;
}

/** Whether path is folder or inside it. */
function within(path: string, folder: string): boolean {
  const f = folder.endsWith('/') ? folder : folder + '/';
  return path === folder || path.startsWith(f);
}

const STATE_COLORS: Partial<Record<StateName, string>> = {
  blocked: 'list.warningForeground',
  error: 'list.errorForeground',
  done: 'testing.iconPassed',
  working: 'charts.blue',
  exited: 'disabledForeground',
};

export class SessionsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[] = [];
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: SessionStore,
    /** The workspace's folders; sessions in them are listed first. */
    private readonly folders: () => string[] = () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    /** Every host, when the window shows several (a row per host, its sessions under it); else undefined. */
    private readonly hosts: () => HostGroup[] | undefined = () => undefined,
  ) {
    this.view = vscode.window.createTreeView('agentd.sessions', { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(
      this.view,
      this.changeEmitter,
      store.onDidChange(() => this.refresh()),
      this.view.onDidChangeVisibility(() => this.tick()),
    );
    this.refresh();
  }

  /** Another host's store: its changes redraw the view too. */
  watch(store: SessionStore): void {
    this.disposables.push(store.onDidChange(() => this.refresh()));
  }

  /** Every store shown. */
  private stores(): SessionStore[] {
    return this.hosts()?.map((h) => h.store) ?? [this.store];
  }

  refresh(): void {
    this.changeEmitter.fire(undefined);
    const blocked = this.stores().reduce((n, st) => n + st.blocked().length, 0);
    this.view.badge = blocked ? { value: blocked, tooltip: `${blocked} agent${blocked > 1 ? 's' : ''} waiting on you` } : undefined;
    this.tick();
  }

  /** "How long" is redrawn every second while the view is visible and a session is live. */
  private tick(): void {
    const want = this.view.visible && this.stores().some((st) => st.live().length > 0);
    if (want && !this.ticker) {
      this.ticker = setInterval(() => this.changeEmitter.fire(undefined), 1000);
    } else if (!want && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  /** The folder group a session is listed under, or undefined for this workspace's (another host's sessions are in its folders, not ours). */
  private groupOf(s: Session, local = true): string | undefined {
    if (!local) return undefined;
    const folders = this.folders();
    if (!folders.length || !s.cwd || folders.some((f) => within(s.cwd, f))) return undefined;
    return s.cwd;
  }

  /** The host row of a host, when there are several. */
  private hostOf(node: Node): HostGroup | undefined {
    return node.host === undefined ? undefined : this.hosts()?.find((h) => h.name === node.host);
  }

  private storeOf(node: Node): SessionStore | undefined {
    if (node.host === undefined) return this.store;
    return this.hostOf(node)?.store;
  }

  /** A store's rows: this workspace's sessions, then a row per other folder. */
  private rows(store: SessionStore, host: string | undefined, local: boolean): Node[] {
    const rows: Node[] = [];
    const groups = new Set<string>();
    for (const s of store.all()) {
      const g = this.groupOf(s, local);
      if (g === undefined) rows.push(host === undefined ? { sessionId: s.sessionId } : { sessionId: s.sessionId, host });
      else groups.add(g);
    }
    return [...rows, ...[...groups].sort().map((folder) => (host === undefined ? { sessionId: '', folder } : { sessionId: '', folder, host }))];
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const hosts = this.hosts();
      if (hosts) return hosts.map((h) => ({ sessionId: '', host: h.name, hostGroup: true }));
      return this.rows(this.store, undefined, true);
    }
    if (node.hostGroup) {
      const h = this.hostOf(node);
      return h ? this.rows(h.store, h.name, h.local) : [];
    }
    const store = this.storeOf(node);
    if (!store) return [];
    const local = node.host === undefined || !!this.hostOf(node)?.local;
    if (node.folder !== undefined) {
      return store
        .all()
        .filter((s) => this.groupOf(s, local) === node.folder)
        .map((s) => (node.host === undefined ? { sessionId: s.sessionId } : { sessionId: s.sessionId, host: node.host }));
    }
    const s = store.get(node.sessionId);
    const at = node.host === undefined ? {} : { host: node.host };
    if (!node.question && !node.subject && s?.state === 'blocked' && s.prompt) {
      const rows: Node[] = [{ sessionId: s.sessionId, question: true, ...at }];
      if (s.prompt.subject) rows.push({ sessionId: s.sessionId, subject: true, ...at });
      return rows;
    }
    return [];
  }

  getParent(node: Node): Node | undefined {
    const at = node.host === undefined ? {} : { host: node.host };
    const hostRow = node.host === undefined ? undefined : { sessionId: '', host: node.host, hostGroup: true };
    if (node.hostGroup) return undefined;
    if (node.question || node.subject) return { sessionId: node.sessionId, ...at };
    if (node.folder !== undefined) return hostRow;
    const store = this.storeOf(node);
    const s = store?.get(node.sessionId);
    const local = node.host === undefined || !!this.hostOf(node)?.local;
    const g = s && this.groupOf(s, local);
    return g === undefined ? hostRow : { sessionId: '', folder: g, ...at };
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.hostGroup) {
      const h = this.hostOf(node);
      return h ? hostItem(h) : new vscode.TreeItem(node.host ?? '');
    }
    const store = this.storeOf(node);
    const local = node.host === undefined || !!this.hostOf(node)?.local;
    if (node.folder !== undefined) {
      const item = folderItem(node.folder, (store?.all() ?? []).filter((s) => this.groupOf(s, local) === node.folder));
      if (node.host !== undefined) item.id = `${node.host}:${item.id}`;
      return item;
    }
    const s = store?.get(node.sessionId);
    if (!s) return new vscode.TreeItem(node.sessionId);
    return node.question ? questionItem(s, node.host) : node.subject ? subjectItem(s, node.host) : sessionItem(s, Date.now(), node.host);
  }

  dispose(): void {
    if (this.ticker) clearInterval(this.ticker);
    for (const d of this.disposables) d.dispose();
  }
}

const HOST_COLORS: Partial<Record<HostState['kind'], string>> = {
  down: 'list.errorForeground',
  reconnecting: 'list.warningForeground',
  nodaemon: 'disabledForeground',
};

/** A host's row: its name, its state (and why, for one that is not up), how many of its sessions wait. */
export function hostItem(h: HostGroup): vscode.TreeItem {
  const item = new vscode.TreeItem(h.name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `host:${h.name}`;
  const st = h.state;
  const blocked = h.store.blocked().length;
  const why = st.kind === 'down' || st.kind === 'reconnecting' || st.kind === 'nodaemon' ? st.message : '';
  const count = h.store.all().length;
  item.description = [
    h.local ? `this machine · ${hostStateLabel(st)}` : hostStateLabel(st),
    st.kind === 'up' ? `${count} session${count === 1 ? '' : 's'}` : '',
    blocked ? `${blocked} blocked` : '',
    why ? oneLine(why, 120) : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const color = blocked ? 'list.warningForeground' : HOST_COLORS[st.kind];
  item.iconPath = new vscode.ThemeIcon(h.local ? 'device-desktop' : st.kind === 'up' ? 'remote' : st.kind === 'down' ? 'debug-disconnect' : 'sync', color ? new vscode.ThemeColor(color) : undefined);
  // A plain string: what ssh or agentd said is untrusted, shown as text.
  item.tooltip = `${h.local ? 'This machine' : `Host ${h.name}`}: ${hostStateLabel(st)}${why ? `\n\n${why}` : ''}${st.kind !== 'up' && st.kind !== 'connecting' ? `\n\nTried again every ${Math.round(st.retryMs / 1000)} s or so (its sessions, if any, run on there).` : ''}`;
  item.contextValue = `host host-${st.kind}`;
  item.accessibilityInformation = { label: `host ${h.name}, ${item.description}` };
  return item;
}

/** A group row: sessions started for another folder (another window, Neovim, the CLI). */
export function folderItem(folder: string, sessions: Session[]): vscode.TreeItem {
  const name = folder.split('/').filter(Boolean).pop() ?? folder;
  const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `folder:${folder}`;
  const blocked = sessions.filter((s) => s.state === 'blocked').length;
  item.description = `${folder}${blocked ? ` · ${blocked} blocked` : ''}`;
  item.iconPath = new vscode.ThemeIcon('folder', blocked ? new vscode.ThemeColor('list.warningForeground') : undefined);
  item.tooltip = `Sessions working in ${folder}, outside this workspace: started from another window, Neovim or the agentd CLI.`;
  item.contextValue = 'folder';
  return item;
}

export function contextValue(s: Session): string {
  return `session state-${s.state}${s.state === 'exited' ? ' exited' : ' live'}`;
}

/** The argument a row's command gets: the session, and its host when the window shows several. */
function arg(s: Session, host: string | undefined): { sessionId: string; host?: string } {
  return host === undefined ? { sessionId: s.sessionId } : { sessionId: s.sessionId, host };
}

/** Ids repeat across hosts: a row's id has its host in front when there are several. */
function idPrefix(host: string | undefined): string {
  return host === undefined ? '' : `${host}:`;
}

export function sessionItem(s: Session, now = Date.now(), host?: string): vscode.TreeItem {
  const blocked = s.state === 'blocked' && !!s.prompt;
  const item = new vscode.TreeItem(sessionName(s), blocked ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
  // The id changes only with the prompt, so a row that turns blocked opens
  // expanded, while other state changes keep it: VS Code hands a context-menu
  // command the element by id, and an id that changed between the right-click
  // and the click (done turning idle, say) would reach the command as nothing.
  item.id = `${idPrefix(host)}${s.sessionId}/${s.prompt?.promptId ?? ''}`;
  item.description = `${stateLabel(s)} · ${age(s, now)}`;
  const color = STATE_COLORS[s.state];
  item.iconPath = new vscode.ThemeIcon(agentIcon(s.agent), color ? new vscode.ThemeColor(color) : undefined);
  item.contextValue = contextValue(s);
  item.tooltip = tooltip(s);
  item.accessibilityInformation = { label: `${sessionName(s)}, ${stateLabel(s)} for ${age(s, now)}${blocked ? ', asks: ' + promptText(s.prompt!) : ''}` };
  if (s.agentInfo && blocked) {
    // An ACP session has no terminal to open: its row answers its prompt.
    item.command = { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [arg(s, host)] };
  } else if (s.state !== 'exited') {
    item.command = { title: 'Open Terminal', command: 'agentd.openTerminal', arguments: [arg(s, host)] };
  }
  return item;
}

export function questionItem(s: Session, host?: string): vscode.TreeItem {
  const item = new vscode.TreeItem(oneLine(s.prompt?.question ?? '', 200), vscode.TreeItemCollapsibleState.None);
  item.id = `${idPrefix(host)}${s.sessionId}/question/${s.prompt?.promptId ?? ''}`;
  item.iconPath = new vscode.ThemeIcon('question', new vscode.ThemeColor('list.warningForeground'));
  item.description = (s.prompt?.options ?? []).map((o) => oneLine(o.label, 60)).join(' / ');
  // A plain string: VS Code shows it as text.
  item.tooltip = `${s.prompt?.question}\n\n${(s.prompt?.options ?? []).map((o) => `${o.id}. ${o.label}`).join('\n')}\n\nClick to answer.`;
  item.contextValue = 'question';
  item.command = { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [arg(s, host)] };
  return item;
}

const SUBJECT_ICONS: Record<string, string> = {
  command: 'terminal',
  edit: 'diff',
  write: 'new-file',
  read: 'file',
  fetch: 'globe',
  folder: 'folder',
  tool: 'tools',
};

/** The row under the question: what the prompt approves; its click opens the diff or the command when there is more to see. */
export function subjectItem(s: Session, host?: string): vscode.TreeItem {
  const sub = s.prompt?.subject ?? { kind: 'other', text: '' };
  const bad = unreadable(sub);
  const item = new vscode.TreeItem(bad ? 'agentd could not read what it approves' : oneLine(sub.text || sub.detail || '', 200), vscode.TreeItemCollapsibleState.None);
  item.id = `${idPrefix(host)}${s.sessionId}/subject/${s.prompt?.promptId ?? ''}`;
  item.iconPath = new vscode.ThemeIcon(SUBJECT_ICONS[sub.kind] ?? 'question');
  item.description = bad ? 'see the terminal' : `${sub.kind}${sub.truncated ? ' (cut)' : ''}`;
  item.tooltip = subjectTooltip(sub);
  const action = subjectAction(sub);
  item.contextValue = action ? 'subject subject-more' : 'subject';
  item.accessibilityInformation = { label: subjectLine(sub, 200) };
  item.command = action
    ? { title: action, command: 'agentd.showSubject', arguments: [arg(s, host)] }
    : bad && !s.agentInfo
      ? { title: 'Open Terminal', command: 'agentd.openTerminal', arguments: [arg(s, host)] }
      : { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [arg(s, host)] };
  return item;
}

/** What a subject is, in markdown: every text escaped, its rows in a code block they cannot close. */
export function subjectMarkdown(sub: Subject): string {
  if (unreadable(sub)) return '*agentd could not read what this prompt approves: look at the terminal.*\n\n';
  let md = `**${mdEscape(sub.kind)}**: ${mdEscape(oneLine(sub.text, 300))}${sub.truncated ? ' *(cut)*' : ''}\n\n`;
  const detail = sub.detail?.trim() ? sub.detail : '';
  if (detail && oneLine(detail, Infinity) !== oneLine(sub.text, Infinity)) {
    const rows = detail.split('\n');
    const shown = rows.length > 40 ? [...rows.slice(0, 40), `… ${rows.length - 40} more rows`].join('\n') : detail;
    md += mdCodeBlock(shown, (sub.kind === 'edit' || sub.kind === 'write') && diffFiles(sub) ? 'diff' : sub.kind === 'command' ? 'sh' : '') + '\n';
  }
  return md;
}

function subjectTooltip(sub: Subject): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(subjectMarkdown(sub));
  const action = subjectAction(sub);
  if (action) md.appendMarkdown(`*Click: ${action}.*`);
  return md;
}

function tooltip(s: Session): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${mdEscape(sessionName(s))}** (${mdEscape(s.agent || 'unknown agent')}, ${mdEscape(s.sessionId)})\n\n`);
  md.appendMarkdown(`${mdEscape(stateLabel(s))} since ${new Date(s.since).toLocaleTimeString()}, by \`${s.stateSource}\` \`${s.reason}\`\n\n`);
  if (s.prompt) {
    md.appendMarkdown(`**${mdEscape(oneLine(s.prompt.question, 300))}**\n\n`);
    if (s.prompt.subject) md.appendMarkdown(subjectMarkdown(s.prompt.subject));
    md.appendMarkdown(`${s.prompt.options.map((o) => `${mdEscape(o.id)}\\. ${mdEscape(oneLine(o.label, 200))}`).join('  \n')}\n\n`);
  }
  if (s.argv.length) md.appendMarkdown(mdCodeBlock(s.argv.join(' '), 'sh'));
  if (s.cwd) md.appendMarkdown(`in ${mdEscape(s.cwd)}`);
  return md;
}
