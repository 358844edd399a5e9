// The status bar badge: counts per state (`$(bell) 1 blocked · 2 working`),
// warning colours while anything is blocked, and a click that goes to the
// prompt waiting longest. While agentd is not running it says so instead.
import * as vscode from 'vscode';

import { age, badgeText, mdEscape, promptText, sessionName, stateLabel, STATE_ICONS, urgentState } from './format';
import { SessionSource } from './sessions';
import { Status } from './supervisor';

export class StatusDisplay implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private status: Status = { kind: 'stopped' };
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly store: SessionSource,
    onStatus: (listener: (s: Status) => void) => { dispose(): void },
  ) {
    this.item = vscode.window.createStatusBarItem('badge', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'agentd';
    this.disposables.push(
      this.item,
      store.onDidChange(() => this.render()),
      onStatus((s: Status) => {
        this.status = s;
        this.render();
      }),
    );
    this.render();
    this.item.show();
  }

  render(): void {
    const item = this.item;
    const st = this.status;
    if (st.kind !== 'running') {
      const text: Record<Exclude<Status['kind'], 'running'>, string> = {
        stopped: '$(circle-slash) agentd stopped',
        starting: '$(loading~spin) agentd starting',
        restarting: '$(sync~spin) agentd restarting',
        failed: '$(error) agentd failed',
      };
      item.text = text[st.kind];
      item.tooltip =
        st.kind === 'restarting'
          ? `${st.reason}; restarting in ${Math.round(st.delayMs / 1000)} s (attempt ${st.attempt}). Click for the log.`
          : st.kind === 'failed'
            ? `${st.message}\n\nClick for the log.`
            : `agentd is ${st.kind}. Click for the log.`;
      item.backgroundColor = st.kind === 'failed' || st.kind === 'restarting' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
      item.color = st.kind === 'failed' || st.kind === 'restarting' ? new vscode.ThemeColor('statusBarItem.errorForeground') : undefined;
      item.command = 'agentd.showLog';
      item.accessibilityInformation = { label: item.text.replace(/\$\([^)]*\)\s*/g, '') };
      return;
    }
    const counts = this.store.counts();
    const urgent = urgentState(counts);
    item.text = badgeText(counts);
    item.backgroundColor =
      urgent === 'blocked'
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : urgent === 'error'
          ? new vscode.ThemeColor('statusBarItem.errorBackground')
          : undefined;
    item.color =
      urgent === 'blocked'
        ? new vscode.ThemeColor('statusBarItem.warningForeground')
        : urgent === 'error'
          ? new vscode.ThemeColor('statusBarItem.errorForeground')
          : undefined;
    item.command =
      urgent === 'blocked'
        ? { title: 'Answer the prompt waiting longest', command: 'agentd.answerLongestWaiting' }
        : { title: 'Show agent sessions', command: 'agentd.sessions.focus' };
    item.tooltip = this.tooltip();
    item.accessibilityInformation = { label: `agentd: ${item.text.replace(/\$\([^)]*\)\s*/g, '')}` };
  }

  private tooltip(): vscode.MarkdownString {
    const md = new vscode.MarkdownString('', true);
    md.supportThemeIcons = true;
    const sessions = this.store.all();
    if (sessions.length === 0) {
      md.appendMarkdown('**agentd**: no agent sessions. Start one with *agentd: New Agent Session*.');
      return md;
    }
    md.appendMarkdown('**agentd sessions**\n\n');
    const now = Date.now();
    for (const s of sessions) {
      // The question and what it approves: untrusted, and this tooltip is trusted markdown, so every character is escaped.
      const q = s.state === 'blocked' && s.prompt ? `: ${mdEscape(promptText(s.prompt))}` : '';
      md.appendMarkdown(`$(${STATE_ICONS[s.state].replace('~spin', '')}) ${mdEscape(this.name(s))}: ${stateLabel(s)} ${age(s, now)}${q}\n\n`);
    }
    const blocked = this.store.longestBlocked();
    md.appendMarkdown(blocked ? `*Click to answer ${mdEscape(this.name(blocked))}.*` : '*Click to show the sessions.*');
    return md;
  }

  /** A session's name, with its host when there are several. */
  private name(s: Parameters<typeof sessionName>[0]): string {
    const host = this.store.hostOf?.(s);
    return host ? `${sessionName(s)} on ${host}` : sessionName(s);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
