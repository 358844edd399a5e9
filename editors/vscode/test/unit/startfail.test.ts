// When agentd does not start (issue 31): one message with the command line,
// the exit code and agentd's stderr, and buttons for the log and the
// setting; no restart loop for a program that cannot start.
import { fake, vscode as fakeVscode } from './fake_vscode';

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { AgentdClient, StartError } from '../../src/client';
import { readConfig } from '../../src/config';
import { Ctx } from '../../src/ctx';
import { cmdline, describeStartFailure, excerpt, splitStdio, StderrTail } from '../../src/startfail';
import { Status, Supervisor } from '../../src/supervisor';
import { agentdBin, clientOptions, eventually, newSocket, stateDir } from './agentd';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-startfail-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\n${body}`, { mode: 0o755 });
  return p;
}

const exits2 = script('agentd-exits-2', 'echo "agentd: cannot read rules: rules/x.toml: line 3: bad key" >&2\nexit 2\n');

async function startError(p: Promise<unknown>): Promise<StartError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StartError, `a StartError, not ${String(e)}`);
    return e;
  }
  throw new Error('it started');
}

test('the stderr kept: the cause before a usage text, the last lines, the first and last of a long one', () => {
  assert.deepEqual(excerpt(['flag provided but not defined: -bogus', 'Usage of agentd --stdio:', '  -cooldown duration']), ['flag provided but not defined: -bogus']);
  assert.deepEqual(excerpt(['a', '', 'b', 'c'], 2), ['b', 'c']);
  assert.deepEqual(excerpt(['time=2026-01-01T00:00:00Z level=INFO msg=x', 'time=2026-01-01T00:00:00Z level=ERROR msg=y']), ['time=2026-01-01T00:00:00Z level=ERROR msg=y']);
  const t = new StderrTail(2, 2);
  for (let i = 1; i <= 7; i++) t.push(`l${i}`);
  assert.deepEqual(t.lines(), ['l1', 'l2', '… (3 lines)', 'l6', 'l7']);
  assert.equal(cmdline(['/x/agentd', '--stdio', 'a b']), "/x/agentd --stdio 'a b'");
  assert.equal(
    describeStartFailure({ argv: ['/x/agentd', '--stdio'], code: 2, signal: null, stderr: ['agentd: bad'] }),
    'agentd did not start: it exited with code 2 before it answered initialize. Command: /x/agentd --stdio. Its stderr: agentd: bad',
  );
});

test('agentd.path with --stdio: the program before it, the arguments after it, and a note with the right form', () => {
  assert.deepEqual(splitStdio('/opt/agentd'), { path: '/opt/agentd', args: [], private: false });
  assert.deepEqual(splitStdio('/opt/My Tools/agentd'), { path: '/opt/My Tools/agentd', args: [], private: false });
  const s = splitStdio('/opt/agentd --stdio --private --verbose');
  assert.equal(s.path, '/opt/agentd');
  assert.deepEqual(s.args, ['--verbose']);
  assert.equal(s.private, true);
  assert.equal(s.note, 'agentd.path "/opt/agentd --stdio --private --verbose" has --stdio, which the extension adds itself: set it to "/opt/agentd" (it runs that way now).');
  fake.reset();
  fake.config['path'] = '/opt/agentd --stdio';
  const c = readConfig();
  assert.equal(c.path, '/opt/agentd');
  assert.deepEqual(c.pathArgs, []);
  assert.match(c.pathNote ?? '', /set it to "\/opt\/agentd"/);
});

test('a program that exits 2 with a message: a StartError with the command line, the exit code and the message', async () => {
  const e = await startError(AgentdClient.start(clientOptions({ path: exits2 })));
  assert.equal(e.notFound, false);
  assert.equal(e.failure?.code, 2);
  assert.equal(e.message, `agentd did not start: it exited with code 2 before it answered initialize. Command: ${exits2} --stdio --verbose --cooldown 1s. Its stderr: agentd: cannot read rules: rules/x.toml: line 3: bad key`);
});

test('real agentd given an argument it does not know: the cause from its stderr, not its usage text', async () => {
  const e = await startError(AgentdClient.start(clientOptions({ args: ['--bogus'] })));
  assert.match(e.message, /exited with code 2 before it answered initialize/);
  assert.match(e.message, /Its stderr: flag provided but not defined: -bogus$/);
  assert.doesNotMatch(e.message, /Usage|-cooldown duration/);
});

test('a daemon that refuses (another protocol): its message and exit code, and stderr not said twice', async () => {
  const msg = 'agentd: the running agentd daemon (pid 1, version 0.0.1) speaks protocol 0 and this agentd speaks 1: run agentd stop, then start again';
  // What agentd's forwarder does: reads the request (all of it: one that
  // read a byte and left made the rest of the client's write fail, and on
  // a busy machine that failure came before the answer), answers it with
  // -32041, says so on stderr, exits 1.
  const body = JSON.stringify({ jsonrpc: '2.0', id: 0, error: { code: -32041, message: msg } });
  const readRequest = `IFS= read -r header\nIFS= read -r blank\nhead -c "$(printf '%s' "$header" | tr -dc 0-9)" >/dev/null\n`;
  const refuse = script('agentd-incompatible', `${readRequest}printf 'Content-Length: ${body.length}\\r\\n\\r\\n%s' '${body}'\necho '${msg}' >&2\nexit 1\n`);
  const e = await startError(AgentdClient.start(clientOptions({ path: refuse })));
  assert.match(e.message, /^agentd did not start: it refused initialize: the running agentd daemon \(pid 1, version 0\.0\.1\) speaks protocol 0/);
  assert.match(e.message, /\(it exited with code 1\)\. Command: /);
  assert.doesNotMatch(e.message, /Its stderr/);
});

test('real agentd refusing a socket folder others can reach: why, with the command line', async () => {
  const open = path.join(dir, 'open-run');
  fs.mkdirSync(open, { mode: 0o755 });
  fs.chmodSync(open, 0o755);
  const e = await startError(AgentdClient.start(clientOptions({ env: { ...process.env, XDG_STATE_HOME: stateDir, AGENTD_SOCKET: path.join(open, 'agentd.sock') } })));
  assert.match(e.message, new RegExp(`it refused initialize: agentd's folder ${open} has mode 0755`));
  assert.match(e.message, /Command: .*agentd --stdio --verbose --cooldown 1s\.$/);
});

test('the Supervisor gives up at once on an agentd that does not start: no restart loop, one failed status', async () => {
  const sup = new Supervisor(() => clientOptions({ path: exits2 }), { baseDelayMs: 10 });
  const seen: Status[] = [];
  sup.onDidChangeStatus((s) => seen.push(s));
  await sup.start();
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(
    seen.map((s) => s.kind),
    ['starting', 'failed'],
  );
  const f = sup.status as Extract<Status, { kind: 'failed' }>;
  assert.equal(f.startup, true);
  assert.equal(f.notFound, false);
  assert.match(f.message, /exited with code 2 .*Its stderr: agentd: cannot read rules/);
  await sup.stop();
});

test('the window says it once, with Show Log, Open Settings and Retry; Show Log opens the log that has all of stderr', async () => {
  fake.reset();
  fake.config['path'] = exits2;
  const lines: string[] = [];
  let shown = 0;
  const real = fakeVscode.window.createOutputChannel;
  const w = fakeVscode.window as unknown as { createOutputChannel: () => unknown };
  w.createOutputChannel = () => ({ appendLine: (l: string) => void lines.push(l), append() {}, show: () => void shown++, dispose() {} });
  fake.onMessage = (m) => (m.severity === 'error' ? 'Show Log' : undefined);
  const ext = { extension: { packageJSON: { version: '0.0.0-test' } }, workspaceState: { get: () => undefined, update: async () => undefined } };
  const ctx = new Ctx(ext as never);
  try {
    await ctx.start();
    await eventually('the log shown', () => shown > 0, 5000);
    const errors = fake.shown.filter((m) => m.severity !== 'info');
    assert.equal(errors.length, 1, JSON.stringify(fake.shown));
    assert.equal(errors[0].severity, 'error');
    assert.match(errors[0].message, /agentd did not start: it exited with code 2 before it answered initialize\. Command: .*agentd-exits-2 --stdio --verbose --cooldown 30s\. Its stderr: agentd: cannot read rules/);
    assert.deepEqual(errors[0].items, ['Show Log', 'Open Settings', 'Retry']);
    assert.ok(lines.some((l) => l.includes('cannot read rules')), lines.join('\n'));
  } finally {
    await ctx.dispose();
    fakeVscode.window.createOutputChannel = real;
  }
});

test('agentd.path with --stdio: the window says the right form once, and agentd runs', async () => {
  fake.reset();
  process.env.AGENTD_SOCKET = newSocket();
  process.env.XDG_STATE_HOME = stateDir;
  fake.config['path'] = `${agentdBin()} --stdio`;
  const ext = { extension: { packageJSON: { version: '0.0.0-test' } }, workspaceState: { get: () => undefined, update: async () => undefined } };
  const ctx = new Ctx(ext as never);
  try {
    await ctx.start();
    assert.equal(ctx.agentd.status.kind, 'running');
    const warnings = fake.shown.filter((m) => m.severity !== 'info');
    assert.equal(warnings.length, 1, JSON.stringify(fake.shown));
    assert.equal(warnings[0].severity, 'warning');
    assert.equal(warnings[0].message, `agentd.path "${agentdBin()} --stdio" has --stdio, which the extension adds itself: set it to "${agentdBin()}" (it runs that way now).`);
    assert.deepEqual(warnings[0].items, ['Open Settings']);
  } finally {
    await ctx.dispose();
  }
});
