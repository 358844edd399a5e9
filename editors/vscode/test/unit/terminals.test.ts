// A session in a terminal (Pseudoterminal), against the real agentd.
import { fake, FakeTerminal, vscode } from './fake_vscode';

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'os';

import { SessionStore } from '../../src/sessions';
import { Supervisor } from '../../src/supervisor';
import { SessionPty, Terminals } from '../../src/terminals';
import { clientOptions, demoArgv, eventually } from './agentd';

let sup: Supervisor;
const store = new SessionStore();
const seen: string[] = [];
let terminals: Terminals;

before(async () => {
  fake.reset();
  sup = new Supervisor(() => clientOptions());
  await sup.start();
  sup.onState((n) => store.applyState(n));
  sup.onExited((n) => store.applyExited(n));
  terminals = new Terminals(sup, store, () => undefined, (id) => seen.push(id));
});

after(async () => {
  terminals.dispose();
  await sup.stop();
});

function output(pty: SessionPty): () => string {
  let text = '';
  pty.onDidWrite((d) => (text += d));
  return () => text;
}

test('New session in a terminal: it starts at the terminal size, its screen is drawn, keys typed reach it, a resize follows the view', async () => {
  const started = terminals.spawn({ argv: demoArgv(), cwd: os.tmpdir(), name: 'Demo' }, 'beaker');
  const t = fake.terminals[0];
  assert.equal(t.options.name, 'Demo (agentd)');
  assert.equal((t.options.iconPath as { id: string }).id, 'beaker');
  assert.ok(t.shown > 0, 'the terminal is shown');
  const pty = t.options.pty as SessionPty;
  const text = output(pty);
  pty.open({ columns: 91, rows: 27 });
  const s = await started;
  assert.equal(s.cols, 91);
  assert.equal(s.rows, 27);
  assert.equal(store.get(s.sessionId)?.name, 'Demo');
  await eventually('the repaint', () => text().includes('Welcome to the agentd demo agent'));
  pty.handleInput('hello');
  await eventually('the typed keys echoed', () => text().includes('hello'));
  pty.setDimensions({ columns: 100, rows: 30 });
  await eventually('the new size', async () => (await sup.list()).find((x) => x.sessionId === s.sessionId)?.cols === 100);
  assert.equal(terminals.sessionOf(t as never), s.sessionId);
});

test('focusing a session terminal counts as looking at it', async () => {
  const t = fake.terminals[0] as FakeTerminal;
  const id = terminals.sessionOf(t as never)!;
  seen.length = 0;
  vscode._focusTerminal(t);
  assert.deepEqual(seen, [id]);
  vscode._focusTerminal(undefined);
  assert.deepEqual(seen, [id], 'another terminal is not this session');
});

test('Open Terminal on a running session shows it again rather than a second terminal; when the agent exits the terminal says so', async () => {
  const id = terminals.sessionOf(fake.terminals[0] as never)!;
  terminals.show(store.get(id)!);
  assert.equal(fake.terminals.length, 1);
  const pty = fake.terminals[0].options.pty as SessionPty;
  const text = output(pty);
  await sup.kill({ sessionId: id });
  await eventually('the exit line', () => text().includes('[agentd] Demo was ended by SIGHUP.'));
  assert.equal(store.get(id)?.state, 'exited');
});

test('a terminal for a session agentd does not know says why', async () => {
  const pty = new SessionPty(sup, 's404', () => undefined);
  const text = output(pty);
  pty.open({ columns: 80, rows: 24 });
  await eventually('the error line', () => /\[agentd\] .*s404/.test(text()));
});
