// The status bar badge and the Sessions view, with the fake `vscode`.
import { fake, ThemeColor, ThemeIcon, TreeItemCollapsibleState } from './fake_vscode';

import { beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';

import { Prompt, Session } from '../../src/protocol';
import { SessionStore } from '../../src/sessions';
import { contextValue, questionItem, sessionItem, SessionsView, subjectItem } from '../../src/sessions_view';
import { StatusDisplay } from '../../src/status_display';
import { Status } from '../../src/supervisor';

const prompt: Prompt = { promptId: 'p1', kind: 'permission', question: 'Do you want to proceed?', options: [{ id: '1', label: 'Yes' }, { id: '3', label: 'No' }], freeform: false };

function session(id: string, state: Session['state'], extra: Partial<Session> = {}): Session {
  return { sessionId: id, name: `Agent ${id}`, agent: 'claude', argv: ['claude'], cwd: '/w', pid: 1, cols: 80, rows: 24, state, stateSource: 'screen', reason: 'r', since: new Date(Date.now() - 12_000).toISOString(), ...extra };
}

beforeEach(() => fake.reset());

function badge() {
  const store = new SessionStore();
  let emit: (s: Status) => void = () => undefined;
  const display = new StatusDisplay(store, (l) => {
    emit = l;
    return { dispose() {} };
  });
  return { store, display, item: fake.statusBarItems[0], status: (s: Status) => emit(s) };
}

test('the badge counts sessions, turns warning-coloured while one is blocked, and its click goes to the prompt waiting longest', () => {
  const { store, item, status } = badge();
  status({ kind: 'running', pid: 1, version: 'x', restarts: 0 });
  assert.equal(item.visible, true);
  assert.equal(item.text, '$(hubot) agentd');
  store.upsert(session('s1', 'working'));
  store.upsert(session('s2', 'blocked', { prompt }));
  assert.equal(item.text, '$(bell) 1 blocked · 1 working');
  assert.equal((item.backgroundColor as ThemeColor).id, 'statusBarItem.warningBackground');
  assert.equal((item.command as { command: string }).command, 'agentd.answerLongestWaiting');
  assert.match((item.tooltip as { value: string }).value, /Agent s2: blocked 12s: Do you want to proceed\?/);
  // With what it approves, escaped: the badge's tooltip is trusted markdown (it has icons and command links).
  store.upsert(session('s3', 'blocked', { prompt: { ...prompt, subject: { kind: 'command', text: '[run](command:workbench.action.terminal.new) `rm` <b>x</b>' } } }));
  const tip = (item.tooltip as { value: string }).value;
  assert.ok(tip.includes('Agent s3: blocked 12s: Do you want to proceed? — command\\: \\[run\\]\\(command\\:workbench\\.action\\.terminal\\.new\\) \\`rm\\` \\<b\\>x\\</b\\>'), tip);
  store.remove('s3');
  store.applyState({ sessionId: 's2', agent: 'claude', state: 'working', previous: 'blocked', stateSource: 'screen', reason: 'r', since: new Date().toISOString(), attention: false });
  assert.equal(item.text, '$(sync~spin) 2 working');
  assert.equal(item.backgroundColor, undefined);
  assert.equal((item.command as { command: string }).command, 'agentd.sessions.focus');
});

test('while agentd is not running the badge says so, in error colours when it died', () => {
  const { item, status } = badge();
  status({ kind: 'starting' });
  assert.equal(item.text, '$(loading~spin) agentd starting');
  status({ kind: 'restarting', delayMs: 4000, attempt: 3, reason: 'agentd stopped unexpectedly (exit code 2)' });
  assert.equal(item.text, '$(sync~spin) agentd restarting');
  assert.match(String(item.tooltip), /exit code 2\); restarting in 4 s \(attempt 3\)/);
  assert.equal((item.backgroundColor as ThemeColor).id, 'statusBarItem.errorBackground');
  status({ kind: 'failed', message: 'agentd was not found', notFound: true, startup: true });
  assert.equal(item.text, '$(error) agentd failed');
  assert.equal(item.command, 'agentd.showLog');
});

test('a Sessions row: agent icon coloured by state, name, state and how long; a blocked row opens onto its question', () => {
  const s = session('s1', 'blocked', { name: 'Claude Code', prompt });
  const item = sessionItem(s);
  assert.equal(item.label, 'Claude Code');
  assert.equal(item.description, 'blocked · 12s');
  assert.equal((item.iconPath as ThemeIcon).id, 'sparkle');
  assert.equal((item.iconPath as ThemeIcon).color?.id, 'list.warningForeground');
  assert.equal(item.collapsibleState, TreeItemCollapsibleState.Expanded);
  assert.equal(item.command?.command, 'agentd.openTerminal');
  const q = questionItem(s);
  assert.equal(q.label, 'Do you want to proceed?');
  assert.equal(q.description, 'Yes / No');
  assert.equal(q.command?.command, 'agentd.answerPrompt');
  assert.deepEqual(q.command?.arguments, [{ sessionId: 's1' }]);
  // A context menu finds its row by id: a state change alone keeps it, a new prompt does not.
  assert.equal(sessionItem(session('s1', 'done')).id, sessionItem(session('s1', 'idle')).id);
  assert.notEqual(item.id, sessionItem(session('s1', 'working')).id);

  const store = new SessionStore();
  const view = new SessionsView(store);
  store.upsert(s);
  store.upsert(session('s2', 'done', { agent: 'codex', outcome: 'completed' }));
  assert.deepEqual(
    view.getChildren().map((n) => n.sessionId),
    ['s1', 's2'],
  );
  assert.deepEqual(view.getChildren({ sessionId: 's1' }), [{ sessionId: 's1', question: true }]);
  // With a subject, a row for it under the question.
  store.upsert(session('s1', 'blocked', { name: 'Claude Code', prompt: { ...prompt, subject: { kind: 'command', text: 'rm -rf build' } } }));
  assert.deepEqual(view.getChildren({ sessionId: 's1' }), [{ sessionId: 's1', question: true }, { sessionId: 's1', subject: true }]);
  assert.deepEqual(view.getParent({ sessionId: 's1', subject: true }), { sessionId: 's1' });
  assert.deepEqual(view.getChildren({ sessionId: 's2' }), []);
  // An ACP session has no terminal: its blocked row answers its prompt.
  const acp = sessionItem(session('s4', 'blocked', { prompt, agentInfo: { name: 'Copilot', title: 'Copilot', version: '1.0.102' } }));
  assert.equal(acp.command?.command, 'agentd.answerPrompt');
  const exited = sessionItem(session('s3', 'exited', { exit: { exitCode: 0, signal: 'SIGHUP' } }));
  assert.equal(exited.description, 'exited (SIGHUP) · 12s');
  assert.equal(exited.command, undefined);
  view.dispose();
});

test('the subject row: what the prompt approves, its kind, and a click that opens the diff when there is one', () => {
  const edit = subjectItem(session('s1', 'blocked', { prompt: { ...prompt, subject: { kind: 'edit', text: 'src/app.ts', detail: '--- src/app.ts\n+++ src/app.ts\n@@ -1 +1 @@\n-a\n+b\n' } } }));
  assert.equal(edit.label, 'src/app.ts');
  assert.equal(edit.description, 'edit');
  assert.equal((edit.iconPath as ThemeIcon).id, 'diff');
  assert.equal(edit.command?.command, 'agentd.showSubject');
  assert.deepEqual(edit.command?.arguments, [{ sessionId: 's1' }]);
  assert.equal(edit.contextValue, 'subject subject-more');
  const tip = (edit.tooltip as { value: string }).value;
  assert.ok(tip.includes('\n```diff\n--- src/app.ts\n+++ src/app.ts\n@@ -1 +1 @@\n-a\n+b\n'), tip);
  assert.ok(tip.includes('Click: Show Diff'), tip);

  const cmd = subjectItem(session('s1', 'blocked', { prompt: { ...prompt, subject: { kind: 'command', text: 'rm -rf build', detail: 'rm -rf build', truncated: true } } }));
  assert.equal(cmd.label, 'rm -rf build');
  assert.equal(cmd.description, 'command (cut)');
  assert.equal(cmd.command?.command, 'agentd.answerPrompt');
  assert.equal(cmd.contextValue, 'subject');

  const unread = subjectItem(session('s1', 'blocked', { prompt: { ...prompt, subject: { kind: 'other', text: '', truncated: true } } }));
  assert.equal(unread.label, 'agentd could not read what it approves');
  assert.equal(unread.description, 'see the terminal');
  assert.equal(unread.command?.command, 'agentd.openTerminal');

  // A hostile subject in the session row's markdown tooltip: escaped, its rows fenced so they cannot close the fence.
  const hostile = sessionItem(session('s1', 'blocked', { prompt: { ...prompt, subject: { kind: 'command', text: '<img src=x onerror=alert(1)> [a](command:x)', detail: 'echo ```\n[a](command:x)\nline 3' } } }));
  const md = (hostile.tooltip as { value: string }).value;
  assert.ok(md.includes('\\<img src=x onerror=alert\\(1\\)\\> \\[a\\]\\(command\\:x\\)'), md);
  assert.ok(md.includes('\n````sh\necho ```\n[a](command:x)\nline 3\n````\n'), md);
});

test('the context menus of package.json match the rows they are meant for', () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const menus: Array<{ command: string; when: string }> = pkg.contributes.menus['view/item/context'];
  const allowed = (cmd: string, s: Session) =>
    menus
      .filter((m) => m.command === cmd)
      .some((m) => {
        const re = /viewItem =~ \/(.*)\//.exec(m.when);
        return re ? new RegExp(re[1]).test(contextValue(s)) : false;
      });
  const rows = { blocked: session('a', 'blocked', { prompt }), done: session('b', 'done'), idle: session('c', 'idle'), exited: session('d', 'exited') };
  assert.ok(allowed('agentd.answerPrompt', rows.blocked));
  assert.ok(!allowed('agentd.answerPrompt', rows.idle));
  assert.ok(allowed('agentd.markSeen', rows.done));
  assert.ok(!allowed('agentd.markSeen', rows.idle));
  assert.ok(allowed('agentd.killSession', rows.idle) && allowed('agentd.killSession', rows.blocked));
  assert.ok(!allowed('agentd.killSession', rows.exited));
  assert.ok(allowed('agentd.openTerminal', rows.done));
  assert.ok(allowed('agentd.removeSession', rows.exited) && !allowed('agentd.removeSession', rows.idle));
});

test("the daemon's sessions of this workspace come first; sessions started elsewhere follow, grouped by their folder", () => {
  const store = new SessionStore();
  const view = new SessionsView(store, () => ['/work/app']);
  store.upsert(session('s1', 'idle', { cwd: '/work/app' }));
  store.upsert(session('s2', 'blocked', { cwd: '/home/me/other', prompt, origin: { client: 'agentd.nvim' } }));
  store.upsert(session('s3', 'working', { cwd: '/work/app/sub' }));
  store.upsert(session('s4', 'done', { cwd: '/home/me/other' }));
  store.upsert(session('s5', 'idle', { cwd: '/srv/x' }));
  const root = view.getChildren();
  assert.deepEqual(root, [{ sessionId: 's1' }, { sessionId: 's3' }, { sessionId: '', folder: '/home/me/other' }, { sessionId: '', folder: '/srv/x' }]);
  assert.deepEqual(view.getChildren(root[2]), [{ sessionId: 's2' }, { sessionId: 's4' }]);
  assert.deepEqual(view.getParent({ sessionId: 's2' }), { sessionId: '', folder: '/home/me/other' });
  assert.equal(view.getParent({ sessionId: 's1' }), undefined);
  const group = view.getTreeItem(root[2]);
  assert.equal(group.label, 'other');
  assert.equal(group.description, '/home/me/other · 1 blocked');
  assert.equal(group.collapsibleState, TreeItemCollapsibleState.Expanded);
  // With no folder open, every session is this window's.
  const flat = new SessionsView(store, () => []);
  assert.equal(flat.getChildren().length, 5);
  view.dispose();
  flat.dispose();
});
