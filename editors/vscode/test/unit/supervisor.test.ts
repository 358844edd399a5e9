// Restart with back-off, against the real agentd and against programs that fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { AgentdError, NOT_RUNNING } from '../../src/client';
import { Status, Supervisor } from '../../src/supervisor';
import { agentdBin, clientOptions, eventually } from './agentd';

function record(sup: Supervisor): Status[] {
  const seen: Status[] = [];
  sup.onDidChangeStatus((s) => seen.push(s));
  return seen;
}

test('agentd killed from outside is restarted after the first delay, and a new client is announced', async () => {
  const sup = new Supervisor(() => clientOptions(), { baseDelayMs: 50 });
  const seen = record(sup);
  let starts = 0;
  sup.onDidStart(() => starts++);
  await sup.start();
  assert.equal(sup.status.kind, 'running');
  const first = sup.client!.pid;
  sup.client!.kill9();
  await eventually('a running agentd with a new pid', () => sup.status.kind === 'running' && sup.client?.pid !== first, 30_000);
  const kinds = seen.map((s) => s.kind);
  assert.deepEqual(kinds, ['starting', 'running', 'restarting', 'starting', 'running']);
  const r = seen[2] as Extract<Status, { kind: 'restarting' }>;
  assert.equal(r.delayMs, 50);
  assert.equal(r.attempt, 1);
  assert.match(r.reason, /agentd stopped unexpectedly \(killed by SIGKILL\)/);
  assert.equal(starts, 2);
  assert.equal((sup.status as Extract<Status, { kind: 'running' }>).restarts, 1);
  assert.ok((await sup.list()).length === 0);
  await sup.stop();
  assert.equal(sup.status.kind, 'stopped');
});

test('an agentd that ran and then keeps failing to start again is retried with doubling delays, then given up on with a message', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-bad-'));
  const bad = path.join(dir, 'agentd');
  // The real agentd the first time; then it cannot start any more.
  fs.writeFileSync(bad, `#!/bin/sh\nif [ ! -e "${dir}/ran" ]; then : >"${dir}/ran"; exec "${agentdBin()}" "$@"; fi\necho "agentd: cannot read rules" >&2\nexit 3\n`, { mode: 0o755 });
  const sup = new Supervisor(() => clientOptions({ path: bad }), { baseDelayMs: 20, maxAttempts: 3 });
  const seen = record(sup);
  await sup.start();
  assert.equal(sup.status.kind, 'running');
  sup.client!.kill9();
  await eventually('failed', () => sup.status.kind === 'failed', 30_000);
  const delays = seen.filter((s) => s.kind === 'restarting').map((s) => (s as Extract<Status, { kind: 'restarting' }>).delayMs);
  assert.deepEqual(delays, [20, 40, 80]);
  const f = sup.status as unknown as Extract<Status, { kind: 'failed' }>;
  assert.equal(f.notFound, false);
  assert.equal(f.startup, false);
  assert.match(f.message, /exited with code 3/);
  assert.match(f.message, /cannot read rules/);
  assert.match(f.message, /Restart agentd/);
  await sup.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a missing binary fails at once (no restart loop) and says how to fix it', async () => {
  const sup = new Supervisor(() => clientOptions({ path: '/nonexistent/agentd' }), { baseDelayMs: 10 });
  const seen = record(sup);
  await sup.start();
  assert.deepEqual(
    seen.map((s) => s.kind),
    ['starting', 'failed'],
  );
  const f = sup.status as Extract<Status, { kind: 'failed' }>;
  assert.equal(f.notFound, true);
  assert.match(f.message, /not found.*agentd\.path/);
});

test('requests while agentd is not running fail with a reason, not a hang', async () => {
  const sup = new Supervisor(() => clientOptions());
  await assert.rejects(sup.list(), (e: unknown) => {
    assert.ok(e instanceof AgentdError);
    assert.equal(e.code, NOT_RUNNING);
    assert.match(e.message, /agentd is not running: it is stopped/);
    return true;
  });
});

test('restart() ends the old agentd and starts a new one; stop() keeps it stopped', async () => {
  const sup = new Supervisor(() => clientOptions(), { baseDelayMs: 20 });
  await sup.start();
  const old = sup.client!;
  await sup.restart();
  assert.equal(old.running, false);
  assert.equal(sup.status.kind, 'running');
  assert.notEqual(sup.client!.pid, old.pid);
  await sup.stop();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(sup.status.kind, 'stopped');
  assert.equal(sup.client, undefined);
});
