// client/focus: the window tells agentd whether the person is looking at it
// (agentd raises desktop notices only while no client is focused), with
// the agentd.desktopNotifications setting.
import { fake, vscode as fakeVscode } from './fake_vscode';

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';

import { Ctx } from '../../src/ctx';
import { FocusReporter } from '../../src/focus';
import { FocusParams } from '../../src/protocol';
import { agentdBin, eventually, newSocket, stateDir } from './agentd';

test('FocusReporter: a new connection is told, each change is sent once, a failed send is said again', async () => {
  const sent: FocusParams[] = [];
  let fail = false;
  const logs: string[] = [];
  const r = new FocusReporter(
    {
      focus: async (p) => {
        sent.push(p);
        if (fail) throw new Error('agentd is not running');
      },
    },
    true,
    true,
    (l) => logs.push(l),
  );
  r.connected();
  r.setFocused(true); // no change: nothing sent
  r.setFocused(false);
  r.setDesktop(false);
  assert.deepEqual(sent, [
    { focused: true, desktopNotifications: true },
    { focused: false, desktopNotifications: true },
    { focused: false, desktopNotifications: false },
  ]);
  fail = true;
  r.setFocused(true);
  await eventually('the failure logged', () => logs.length > 0);
  assert.match(logs[0], /client\/focus: agentd is not running/);
  fail = false;
  r.setFocused(true); // the failed one is sent again
  r.connected(); // a new connection is told, even with no change
  assert.deepEqual(sent.slice(3), [
    { focused: true, desktopNotifications: false },
    { focused: true, desktopNotifications: false },
    { focused: true, desktopNotifications: false },
  ]);
});

/** agentd's log lines about client focus, from the test daemon's log. */
function focusLines(): string[] {
  let text = '';
  try {
    text = fs.readFileSync(path.join(stateDir, 'agentd', 'agentd.log'), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => l.includes('msg="client focus"'));
}

test('the window: its focus and agentd.desktopNotifications reach the real agentd, on connecting and on each change', async () => {
  fake.reset();
  process.env.AGENTD_SOCKET = newSocket();
  process.env.XDG_STATE_HOME = stateDir;
  fake.config['path'] = agentdBin();
  fake.config['desktopNotifications'] = false;
  fakeVscode.window.state.focused = true;
  const ext = { extension: { packageJSON: { version: '0.0.0-test' } }, workspaceState: { get: () => undefined, update: async () => undefined } };
  const ctx = new Ctx(ext as never);
  try {
    await ctx.start();
    assert.equal(ctx.agentd.status.kind, 'running');
    await eventually('agentd told the window is focused', () => focusLines().some((l) => / focused=true desktopNotifications=false/.test(l)));
    (fakeVscode as unknown as { _setWindowFocus(f: boolean): void })._setWindowFocus(false);
    await eventually('agentd told the window lost the focus', () => focusLines().some((l) => / focused=false desktopNotifications=false/.test(l)));
    assert.equal(focusLines().length, 2, focusLines().join('\n'));
  } finally {
    await ctx.dispose();
    fakeVscode.window.state.focused = true;
  }
});
