// Several hosts ([[hosts]]): which are configured, a host's connection
// and its states, and that every action on a session goes to its host's
// connection. Two real agentd daemons on this machine (a socket each) stand
// in for two hosts here: the ssh leg is agentd's own (cmd/agentd's
// TestStdioForwardsToAHost), and the e2e test runs it for real.
import { fake, ThemeIcon } from './fake_vscode';

import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { answerOnHosts, blockedOnHosts, hostOf } from '../../src/commands';
import { Config } from '../../src/config';
import { HostBundle } from '../../src/ctx';
import { configuredHosts, hostArgs, HostConnection, HostState } from '../../src/hosts';
import { Prompts } from '../../src/prompts';
import { Session } from '../../src/protocol';
import { AllSessions, SessionStore } from '../../src/sessions';
import { HostGroup, SessionsView } from '../../src/sessions_view';
import { StatusDisplay } from '../../src/status_display';
import { Supervisor } from '../../src/supervisor';
import { agentdBin, clientOptions, daemonEnv, demoArgv, eventually, newSocket } from './agentd';

beforeEach(() => fake.reset());

const configHome = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-vscode-hosts-'));
after(() => fs.rmSync(configHome, { recursive: true, force: true }));

function writeConfig(toml: string): NodeJS.ProcessEnv {
  fs.mkdirSync(path.join(configHome, 'agentd'), { recursive: true });
  fs.writeFileSync(path.join(configHome, 'agentd', 'config.toml'), toml);
  return { ...daemonEnv(newSocket()), XDG_CONFIG_HOME: configHome };
}

test('agentd hosts --configured: this machine alone without [[hosts]]; with them, each entry, this machine marked local', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-vscode-nohosts-'));
  const logs: string[] = [];
  assert.deepEqual(await configuredHosts(agentdBin(), { ...daemonEnv(newSocket()), XDG_CONFIG_HOME: empty }, (l) => logs.push(l)), [{ name: 'local', local: true }]);
  fs.rmSync(empty, { recursive: true, force: true });
  const env = writeConfig('[[hosts]]\nname = "box"\nssh = "127.0.0.1"\n');
  assert.deepEqual(await configuredHosts(agentdBin(), env, (l) => logs.push(l)), [
    { name: 'local', local: true },
    { name: 'box', ssh: '127.0.0.1' },
  ]);
  // An agentd that cannot say: this machine alone, and the log says why.
  assert.deepEqual(await configuredHosts('/nonexistent/agentd', env, (l) => logs.push(l)), [{ name: 'local', local: true }]);
  assert.match(logs.join('\n'), /hosts --configured: .*showing this machine only/);
});

test("a host's sidecar is the usual one with --host NAME --no-start (never --private)", () => {
  assert.deepEqual(hostArgs(['--cooldown', '30s', '--private'], 'box'), ['--cooldown', '30s', '--host', 'box', '--no-start']);
});

test('a host ssh cannot reach is down with ssh\'s words, naming the host, and is tried again after 1 s, then 2 s (real agentd and ssh)', async () => {
  // Port 1 on loopback: nothing listens, ssh is refused at once.
  const env = writeConfig('[[hosts]]\nname = "zz"\nssh = "127.0.0.1"\nssh_options = ["-F", "/dev/null", "-p", "1"]\n');
  const conn = new HostConnection('zz', { clientOptions: () => clientOptions({ env }), baseDelayMs: 1000 });
  const states: HostState[] = [];
  conn.onDidChangeState((s) => states.push(s));
  try {
    await conn.start();
    const s = conn.state;
    assert.equal(s.kind, 'down', JSON.stringify(s));
    if (s.kind !== 'down') return;
    assert.match(s.message, /host zz/);
    assert.match(s.message, /Connection refused/);
    assert.equal(s.retryMs, 1000);
    await eventually('a second try', () => states.length >= 2, 15_000);
    assert.equal((states[1] as { retryMs: number }).retryMs, 2000);
    await assert.rejects(conn.answer({ sessionId: 's1', promptId: 'p', optionId: '1' }), /host zz is not connected \(down: /);
  } finally {
    await conn.stop();
  }
});

function session(id: string, state: Session['state'], extra: Partial<Session> = {}): Session {
  return { sessionId: id, name: 'demo', agent: 'claude', argv: ['claude'], cwd: '/w', pid: 1, cols: 80, rows: 24, state, stateSource: 'screen', reason: 'r', since: new Date(Date.now() - 5000).toISOString(), ...extra };
}

const prompt = { promptId: 'p1', kind: 'permission' as const, question: 'Do you want to proceed?', options: [{ id: '1', label: 'Yes' }], freeform: false };

test('the Sessions view with several hosts: a row per host with its state, sessions with the same id under each, rows and commands keyed by host', () => {
  const local = new SessionStore();
  const a = new SessionStore();
  const b = new SessionStore();
  const groups: HostGroup[] = [
    { name: 'laptop', local: true, store: local, state: { kind: 'up' } },
    { name: 'a', local: false, store: a, state: { kind: 'up' } },
    { name: 'b', local: false, store: b, state: { kind: 'down', message: 'host b: ssh: connect to host 127.0.0.1 port 22: Connection refused', retryMs: 4000 } },
  ];
  const view = new SessionsView(local, () => ['/w'], () => groups);
  view.watch(a);
  view.watch(b);
  a.upsert(session('s1', 'blocked', { prompt }));
  b.upsert(session('s1', 'blocked', { prompt }));
  local.upsert(session('s1', 'working'));

  const roots = view.getChildren();
  assert.deepEqual(roots, [
    { sessionId: '', host: 'laptop', hostGroup: true },
    { sessionId: '', host: 'a', hostGroup: true },
    { sessionId: '', host: 'b', hostGroup: true },
  ]);
  const hb = view.getTreeItem(roots[2]);
  assert.equal(hb.label, 'b');
  assert.match(String(hb.description), /^down · 1 blocked · host b: ssh: .*Connection refused$/);
  assert.equal((hb.iconPath as ThemeIcon).id, 'debug-disconnect');
  assert.equal(typeof hb.tooltip, 'string', "ssh's words are plain text");
  assert.match(String(view.getTreeItem(roots[0]).description), /^this machine · up · 1 session$/);

  const underA = view.getChildren(roots[1]);
  const underB = view.getChildren(roots[2]);
  assert.deepEqual(underA, [{ sessionId: 's1', host: 'a' }]);
  assert.deepEqual(underB, [{ sessionId: 's1', host: 'b' }]);
  const ia = view.getTreeItem(underA[0]);
  const ib = view.getTreeItem(underB[0]);
  assert.notEqual(ia.id, ib.id);
  assert.equal(ia.id, 'a:s1/p1');
  assert.deepEqual(ib.command?.arguments, [{ sessionId: 's1', host: 'b' }]);
  const q = view.getChildren(underB[0]);
  assert.deepEqual(q, [{ sessionId: 's1', question: true, host: 'b' }]);
  assert.deepEqual(view.getTreeItem(q[0]).command?.arguments, [{ sessionId: 's1', host: 'b' }]);
  assert.deepEqual(view.getParent(q[0]), underB[0]);
  assert.deepEqual(view.getParent(underB[0]), roots[2]);
  // The view's badge counts every host's blocked sessions.
  assert.equal(view.view.badge?.value, 2);
  view.dispose();
});

test('the status bar counts across hosts and names the host in its tooltip', () => {
  const local = new SessionStore();
  const b = new SessionStore();
  const all = new AllSessions('local', local);
  all.add('b', b);
  const display = new StatusDisplay(all, () => ({ dispose() {} }));
  const item = fake.statusBarItems[0];
  display['status'] = { kind: 'running', pid: 1, version: 'x', restarts: 0 };
  local.upsert(session('s1', 'blocked', { prompt }));
  b.upsert(session('s1', 'blocked', { prompt, since: new Date(Date.now() - 60_000).toISOString() }));
  assert.equal(item.text, '$(bell) 2 blocked');
  const tip = (item.tooltip as { value: string }).value;
  assert.match(tip, /demo on local: blocked/);
  assert.match(tip, /demo on b: blocked/);
  assert.match(tip, /Click to answer demo on b\./, 'b waits longest');
  display.dispose();
});

test('answering with two hosts whose sessions have the same id, name and prompt answers only the one picked, on its host (two real daemons)', async () => {
  const cfg = { notify: { blocked: true, done: true, error: true }, submitOnSend: true } as Config;
  const bundles: HostBundle[] = [];
  const sups: Supervisor[] = [];
  for (const name of ['a', 'b']) {
    const sup = new Supervisor(() => clientOptions());
    await sup.start();
    sups.push(sup);
    const store = new SessionStore();
    const prompts = new Prompts(sup, store, () => cfg, () => undefined, { show: async () => undefined }, name);
    sup.onState((n) => {
      store.applyState(n);
      prompts.onState(n);
    });
    bundles.push({ name, local: name === 'a', agentd: sup, store, prompts, terminals: {} as never, markSeen: () => undefined, openTerminal: () => undefined });
  }
  const hosts = { bundles: () => bundles, bundle: (h: string | undefined) => bundles.find((b) => b.name === (h ?? 'a')), multi: true };
  try {
    for (const b of bundles) {
      const s = await b.agentd.spawn({ argv: demoArgv(), cwd: os.tmpdir(), name: 'demo' });
      assert.equal(s.sessionId, 's1', 'each daemon numbers its own sessions');
      b.store.upsert(s);
      await eventually(`idle on ${b.name}`, () => b.store.get('s1')?.state === 'idle', 30_000);
      await b.agentd.send({ sessionId: 's1', text: 'Add a NOTES.md file', submit: true });
      await eventually(`blocked on ${b.name}`, () => b.store.get('s1')?.state === 'blocked', 30_000);
    }
    const [pa, pb] = bundles.map((b) => b.store.get('s1')!.prompt!);
    assert.equal(pa.question, pb.question);
    assert.notEqual(pa.promptId, pb.promptId, 'promptIds are salted per session');
    // The notices name the host.
    const notices = fake.shown.filter((m) => m.message.includes('needs you')).map((m) => m.message);
    assert.ok(notices.some((m) => m.startsWith('demo on a needs you: ')), JSON.stringify(notices));
    assert.ok(notices.some((m) => m.startsWith('demo on b needs you: ')), JSON.stringify(notices));
    assert.deepEqual(
      blockedOnHosts(hosts).map((x) => x.b.name),
      ['a', 'b'],
    );

    // "Answer Prompt" from the palette: the pick names each host; b is picked, "Yes".
    let labels: string[] = [];
    fake.onShowQuickPick = <T>(items: T[]) => {
      labels = items.map((i) => (i as { label: string }).label);
      return items.find((i) => (i as { label: string }).label === 'demo on b');
    };
    fake.onQuickPick = (qp) => {
      assert.equal(qp.title?.startsWith('demo on b: '), true, qp.title);
      setTimeout(() => qp.pick('Yes'), 0);
    };
    await answerOnHosts(hosts, undefined);
    assert.deepEqual(labels, ['demo on a', 'demo on b']);
    await eventually('b past its prompt', () => bundles[1].store.get('s1')?.state !== 'blocked', 30_000);
    // a still waits, on the same prompt.
    const onA = (await bundles[0].agentd.list()).find((s) => s.sessionId === 's1');
    assert.equal(onA?.state, 'blocked');
    assert.equal(onA?.prompt?.promptId, pa.promptId);

    // A row's command carries its host: it answers there and nowhere else.
    assert.equal(hostOf({ sessionId: 's1', host: 'a' }), 'a');
    fake.onQuickPick = (qp) => {
      assert.equal(qp.title?.startsWith('demo on a: '), true, qp.title);
      setTimeout(() => qp.pick('Yes'), 0);
    };
    await answerOnHosts(hosts, { sessionId: 's1', host: 'a' });
    await eventually('a past its prompt', () => bundles[0].store.get('s1')?.state !== 'blocked', 30_000);
  } finally {
    for (const b of bundles) await b.agentd.kill({ sessionId: 's1' }).catch(() => undefined);
    for (const s of sups) await s.stop();
  }
});
