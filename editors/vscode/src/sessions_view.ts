// The Sessions view: one row per session (agent icon coloured by state, name,
// state, how long), and under a blocked session its question. Context
// actions come from package.json menus keyed on `contextValue`.
import * as vscode from 'vscode';

import { age, agentIcon, sessionName, stateLabel } from './format';
import { Session, StateName } from './protocol';
import { SessionStore } from './sessions';

/** A tree element: a session row, or the question row under a blocked session. */
export interface Node {
  sessionId: string;
  question?: boolean;
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

  constructor(private readonly store: SessionStore) {
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

  getChildren(node?: Node): Node[] {
    if (!node) return this.store.all().map((s) => ({ sessionId: s.sessionId }));
    const s = this.store.get(node.sessionId);
    if (!node.question && s?.state === 'blocked' && s.prompt) return [{ sessionId: s.sessionId, question: true }];
    return [];
  }

  getParent(node: Node): Node | undefined {
    return node.question ? { sessionId: node.sessionId } : undefined;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const s = this.store.get(node.sessionId);
    if (!s) return new vscode.TreeItem(node.sessionId);
    return node.question ? questionItem(s) : sessionItem(s);
  }

  dispose(): void {
    if (this.ticker) clearInterval(this.ticker);
    for (const d of this.disposables) d.dispose();
  }
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
  item.accessibilityInformation = { label: `${sessionName(s)}, ${stateLabel(s)} for ${age(s, now)}${blocked ? ', asks: ' + s.prompt!.question : ''}` };
  if (s.state !== 'exited') item.command = { title: 'Open Terminal', command: 'agentd.openTerminal', arguments: [{ sessionId: s.sessionId }] };
  return item;
}

export function questionItem(s: Session): vscode.TreeItem {
  const item = new vscode.TreeItem(s.prompt?.question ?? '', vscode.TreeItemCollapsibleState.None);
  item.id = `${s.sessionId}/question/${s.prompt?.promptId ?? ''}`;
  item.iconPath = new vscode.ThemeIcon('question', new vscode.ThemeColor('list.warningForeground'));
  item.description = (s.prompt?.options ?? []).map((o) => o.label).join(' / ');
  item.tooltip = `${s.prompt?.question}\n\n${(s.prompt?.options ?? []).map((o) => `${o.id}. ${o.label}`).join('\n')}\n\nClick to answer.`;
  item.contextValue = 'question';
  item.command = { title: 'Answer Prompt', command: 'agentd.answerPrompt', arguments: [{ sessionId: s.sessionId }] };
  return item;
}

function tooltip(s: Session): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${sessionName(s)}** (${s.agent || 'unknown agent'}, ${s.sessionId})\n\n`);
  md.appendMarkdown(`${stateLabel(s)} since ${new Date(s.since).toLocaleTimeString()}, by \`${s.stateSource}\` \`${s.reason}\`\n\n`);
  if (s.prompt) md.appendMarkdown(`**${s.prompt.question}**\n\n${s.prompt.options.map((o) => `${o.id}. ${o.label}`).join('  \n')}\n\n`);
  if (s.argv.length) md.appendCodeblock(s.argv.join(' '), 'sh');
  if (s.cwd) md.appendMarkdown(`in \`${s.cwd}\``);
  return md;
}
