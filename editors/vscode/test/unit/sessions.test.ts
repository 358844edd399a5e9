// The state model: snapshots and notifications merged, counts, the prompt waiting longest.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Prompt, Session, StateNotification } from '../../src/protocol';
import { SessionStore } from '../../src/sessions';

const prompt: Prompt = {
  promptId: 'p1',
  kind: 'permission',
  question: 'Do you want to proceed?',
  options: [
    { id: '1', label: 'Yes', kind: 'allow' },
    { id: '3', label: 'No', kind: 'reject' },
  ],
  freeform: false,
};

function session(id: string, state: Session['state'], since: string, extra: Partial<Session> = {}): Session {
  return { sessionId: id, name: `Agent ${id}`, agent: 'demo', argv: ['demo'], cwd: '/w', pid: 1, cols: 80, rows: 24, state, stateSource: 'screen', reason: 'r', since, ...extra };
}

function note(id: string, state: Session['state'], since: string, extra: Partial<StateNotification> = {}): StateNotification {
  return { sessionId: id, agent: 'demo', state, previous: '', stateSource: 'screen', reason: `demo.${state}`, since, attention: false, ...extra };
}

test('a notification updates the state, prompt and outcome of a known session and keeps its name', () => {
  const st = new SessionStore();
  const changes: unknown[] = [];
  st.onDidChange((c) => changes.push(c));
  st.upsert(session('s1', 'working', '2026-01-01T00:00:00Z'));
  st.applyState(note('s1', 'blocked', '2026-01-01T00:00:02Z', { prompt, attention: true }));
  const s = st.get('s1')!;
  assert.equal(s.name, 'Agent s1');
  assert.equal(s.state, 'blocked');
  assert.equal(s.prompt?.promptId, 'p1');
  st.applyState(note('s1', 'done', '2026-01-01T00:00:05Z', { outcome: 'completed' }));
  assert.equal(st.get('s1')!.prompt, null, 'the prompt goes with the blocked state');
  assert.equal(st.get('s1')!.outcome, 'completed');
  assert.equal(changes.length, 3);
});

test('a notification that arrives before the spawn answer is not overwritten by the older snapshot', () => {
  const st = new SessionStore();
  st.applyState(note('s1', 'idle', '2026-01-01T00:00:00.200Z'));
  assert.equal(st.get('s1')!.name, '', 'a provisional entry');
  st.upsert(session('s1', 'working', '2026-01-01T00:00:00.100Z', { name: 'Claude Code' }));
  const s = st.get('s1')!;
  assert.equal(s.state, 'idle');
  assert.equal(s.name, 'Claude Code');
  assert.deepEqual(s.argv, ['demo']);
  // A newer snapshot (session/list later on) does win.
  st.upsert(session('s1', 'done', '2026-01-01T00:00:09Z', { name: 'Claude Code', outcome: 'failed' }));
  assert.equal(st.get('s1')!.state, 'done');
});

test('counts per state, and the blocked session waiting longest first', () => {
  const st = new SessionStore();
  st.upsert(session('s1', 'working', '2026-01-01T00:00:00Z'));
  st.upsert(session('s2', 'blocked', '2026-01-01T00:00:09Z', { prompt }));
  st.upsert(session('s3', 'blocked', '2026-01-01T00:00:03Z', { prompt }));
  st.upsert(session('s4', 'exited', '2026-01-01T00:00:01Z'));
  const c = st.counts();
  assert.deepEqual(c, { blocked: 2, error: 0, done: 0, working: 1, idle: 0, exited: 1 });
  assert.deepEqual(
    st.blocked().map((s) => s.sessionId),
    ['s3', 's2'],
  );
  assert.equal(st.longestBlocked()?.sessionId, 's3');
  assert.deepEqual(
    st.live().map((s) => s.sessionId),
    ['s1', 's2', 's3'],
  );
});

test('session/exited marks the session exited with its exit; clearExited forgets it', () => {
  const st = new SessionStore();
  st.upsert(session('s1', 'blocked', '2026-01-01T00:00:00Z', { prompt }));
  st.applyExited({ sessionId: 's1', exitCode: 0, signal: 'SIGHUP' });
  const s = st.get('s1')!;
  assert.equal(s.state, 'exited');
  assert.equal(s.prompt, null);
  assert.deepEqual(s.exit, { exitCode: 0, signal: 'SIGHUP' });
  assert.equal(st.longestBlocked(), undefined);
  // A late snapshot does not bring an exited session back.
  st.upsert(session('s1', 'working', '2026-01-01T00:00:30Z'));
  assert.equal(st.get('s1')!.state, 'exited');
  assert.equal(st.clearExited(), 1);
  assert.equal(st.all().length, 0);
});

test('when agentd goes away every live session is marked exited, and clear() empties the store for the next agentd', () => {
  const st = new SessionStore();
  st.upsert(session('s1', 'working', '2026-01-01T00:00:00Z'));
  st.upsert(session('s2', 'exited', '2026-01-01T00:00:00Z', { exit: { exitCode: 1 } }));
  st.markAllExited('agentd.stopped', new Date('2026-01-01T00:01:00Z'));
  assert.equal(st.get('s1')!.state, 'exited');
  assert.equal(st.get('s1')!.reason, 'agentd.stopped');
  assert.deepEqual(st.get('s2')!.exit, { exitCode: 1 }, 'already exited ones are left as they were');
  st.clear();
  assert.equal(st.all().length, 0);
});
