// The Sessions view: one row per session (agent icon coloured by state, name,
// state, how long), and under a blocked session its question and what it
// approves (the command, the file; a click opens the diff). The daemon's
// sessions in this workspace come first; sessions started elsewhere (another
// window, Neovim, the agentd CLI) follow, grouped by their folder. Context
// actions come from package.json menus keyed on `contextValue`.
import * as vscode from 'vscode';

import { age, agentIcon, diffFiles, mdCodeBlock, mdEscape, oneLine, promptText, sessionName, stateLabel, subjectAction, subjectLine, unreadable } from './format';
import { Session, StateName, Subject } from './protocol';
import { SessionStore } from './sessions';

/** A tree element: a session row, the question and subject rows under a blocked session, or a folder of other sessions. */
export interface Node {
  sessionId: string;
  question?: boolean;
  /** The row under the question: what the prompt approves. */
  subject?: boolean;
  /** A group row: the sessions working in this folder, outside the workspace. */
  folder?: string;
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

  refresh(): void {
    this.changeEmitter.fire(undefined);
    const blocked = this.store.blocked().length;
    this.view.badge = blocked ? { value: blocked, tooltip: `${blocked} agent${blocked > 1 ? 's' : ''} waiting on you` } : undefined;
    this.tick();
  }

  /** "How long" is redrawn every second while the view is visible and a session is live. */
  private tick(): void {
    const want = this.view.visible && this.store.live().length > 0;
    if (want && !this.ticker) {
      this.ticker = setInterval(() => this.changeEmitter.fire(undefined), 1000);
    } else if (!want && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  /** The folder group a session is listed under, or undefined for this workspace's. */
  private groupOf(s: Session): string | undefined {
    const folders = this.folders();
    if (!folders.length || !s.cwd || folders.some((f) => within(s.cwd, f))) return undefined;
    return s.cwd;
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const rows: Node[] = [];
      const groups = new Set<string>();
      for (const s of this.store.all()) {
        const g = this.groupOf(s);
        if (g === undefined) rows.push({ sessionId: s.sessionId });
        else groups.add(g);
      }
      return [...rows, ...[...groups].sort().map((folder) => ({ sessionId: '', folder }))];
    }
    if (node.folder !== undefined) {
      return this.store
        .all()
        .filter((s) => this.groupOf(s) === node.folder)
        .map((s) => ({ sessionId: s.sessionId }));
    }
    const s = this.store.get(node.sessionId);
    if (!node.question && !node.subject && s?.state === 'blocked' && s.prompt) {
      const rows: Node[] = [{ sessionId: s.sessionId, question: true }];
      if (s.prompt.subject) rows.push({ sessionId: s.sessionId, subject: true });
      return rows;
    }
    return [];
  }

  getParent(node: Node): Node | undefined {
    if (node.question || node.subject) return { sessionId: node.sessionId };
    if (node.folder !== undefined) return undefined;
    const s = this.store.get(node.sessionId);
    const g = s && this.groupOf(s);
    return g === undefined ? undefined : { sessionId: '', folder: g };
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.folder !== undefined) return folderItem(node.folder, this.store.all().filter((s) => this.groupOf(s) === node.folder));
    const s = this.store.get(node.sessionId);
    if (!s) return new vscode.TreeItem(node.sessionId);
    return node.question ? questionItem(s) : node.subject ? subjectItem(s) : sessionItem(s);
  }

  dispose(): void {
    if (this.ticker) clearInterval(this.ticker);
    for (const d of this.disposables) d.dispose();
  }
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

export function sessionItem(s: Session, now = Date.now()): vscode.TreeItem {
  const blocked = s.state === 'blocked' && !!s.prompt;
  const item = new vscode.TreeItem(sessionName(s), blocked ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
  // The id changes only with the prompt, so a row that turns blocked opens
  // expanded, while other state changes keep it: VS Code hands a context-menu
  // command the element by id, and an id that changed between the right-click
  // and the click (done turning idle, say) would reach the command as nothing.
  item.id = `${s.sessionId}/${s.prompt?.promptId ?? ''}`;
  item.description = `${stateLabel(s)} · ${age(s, now)}`;
  const color = STATE_COLORS[s.state];
  item.iconPath = new vscode.ThemeIcon(agentIcon(s.agent), color ? new vscode.ThemeColor(color) : undefined);
  item.contextValue = contextValue(s);
  item.tooltip = tooltip(s);
  item.accessibilityInformation = { label: `${sessionName(s)}, ${stateLabel(s)} for ${age(s, now)}${blocked ? ', asks: ' + promptText(s.prompt!) : ''}` };
  if (s.agentInfo && blocked) {
    // An ACP session has no terminal to open: its row answers its prompt.
    item.command = { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [{ sessionId: s.sessionId }] };
  } else if (s.state !== 'exited') {
    item.command = { title: 'Open Terminal', command: 'agentd.openTerminal', arguments: [{ sessionId: s.sessionId }] };
  }
  return item;
}

export function questionItem(s: Session): vscode.TreeItem {
  const item = new vscode.TreeItem(oneLine(s.prompt?.question ?? '', 200), vscode.TreeItemCollapsibleState.None);
  item.id = `${s.sessionId}/question/${s.prompt?.promptId ?? ''}`;
  item.iconPath = new vscode.ThemeIcon('question', new vscode.ThemeColor('list.warningForeground'));
  item.description = (s.prompt?.options ?? []).map((o) => oneLine(o.label, 60)).join(' / ');
  // A plain string: VS Code shows it as text.
  item.tooltip = `${s.prompt?.question}\n\n${(s.prompt?.options ?? []).map((o) => `${o.id}. ${o.label}`).join('\n')}\n\nClick to answer.`;
  item.contextValue = 'question';
  item.command = { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [{ sessionId: s.sessionId }] };
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
export function subjectItem(s: Session): vscode.TreeItem {
  const sub = s.prompt?.subject ?? { kind: 'other', text: '' };
  const bad = unreadable(sub);
  const item = new vscode.TreeItem(bad ? 'agentd could not read what it approves' : oneLine(sub.text || sub.detail || '', 200), vscode.TreeItemCollapsibleState.None);
  item.id = `${s.sessionId}/subject/${s.prompt?.promptId ?? ''}`;
  item.iconPath = new vscode.ThemeIcon(SUBJECT_ICONS[sub.kind] ?? 'question');
  item.description = bad ? 'see the terminal' : `${sub.kind}${sub.truncated ? ' (cut)' : ''}`;
  item.tooltip = subjectTooltip(sub);
  const action = subjectAction(sub);
  item.contextValue = action ? 'subject subject-more' : 'subject';
  item.accessibilityInformation = { label: subjectLine(sub, 200) };
  item.command = action
    ? { title: action, command: 'agentd.showSubject', arguments: [{ sessionId: s.sessionId }] }
    : bad && !s.agentInfo
      ? { title: 'Open Terminal', command: 'agentd.openTerminal', arguments: [{ sessionId: s.sessionId }] }
      : { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [{ sessionId: s.sessionId }] };
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
