// What a person reads: the badge text, durations, state labels, command lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { agentChoices, DEFAULT_ACP_AGENTS } from '../../src/agents';
import { badgeText, duration, promptText, splitCommandLine, stateLabel, urgentState } from '../../src/format';
import { Session } from '../../src/protocol';
import { Counts } from '../../src/sessions';

const counts = (c: Partial<Counts>): Counts => ({ blocked: 0, error: 0, done: 0, working: 0, idle: 0, exited: 0, ...c });

test('the badge counts states most urgent first, with the icon of the most urgent', () => {
  assert.equal(badgeText(counts({ blocked: 1, working: 2 })), '$(bell) 1 blocked · 2 working');
  assert.equal(badgeText(counts({ working: 2, done: 1, idle: 3 })), '$(check) 1 done · 2 working · 3 idle');
  assert.equal(badgeText(counts({ error: 1, idle: 1 })), '$(error) 1 error · 1 idle');
  assert.equal(badgeText(counts({ working: 1 })), '$(sync~spin) 1 working');
  assert.equal(badgeText(counts({ exited: 4 })), '$(hubot) agentd', 'exited sessions are not counted');
  assert.equal(urgentState(counts({ blocked: 1, error: 1 })), 'blocked');
  assert.equal(urgentState(counts({ exited: 1 })), undefined);
});

test('durations read as a person says them', () => {
  assert.equal(duration(0), '0s');
  assert.equal(duration(59_999), '59s');
  assert.equal(duration(60_000), '1m');
  assert.equal(duration(3_599_000), '59m');
  assert.equal(duration(3_600_000), '1h');
  assert.equal(duration(3_900_000), '1h 5m');
  assert.equal(duration(26 * 3_600_000), '1d 2h');
  assert.equal(duration(-5), '0s');
});

test('state labels carry the outcome and the exit', () => {
  const s = (x: Partial<Session>) => ({ state: 'idle', ...x }) as Session;
  assert.equal(stateLabel(s({ state: 'done', outcome: 'completed' })), 'done');
  assert.equal(stateLabel(s({ state: 'done', outcome: 'failed' })), 'done (failed)');
  assert.equal(stateLabel(s({ state: 'exited', exit: { exitCode: 0 } })), 'exited');
  assert.equal(stateLabel(s({ state: 'exited', exit: { exitCode: 2 } })), 'exited (code 2)');
  assert.equal(stateLabel(s({ state: 'exited', exit: { exitCode: 0, signal: 'SIGHUP' } })), 'exited (SIGHUP)');
});

test('a typed command line splits into argv like a shell splits words, without a shell', () => {
  assert.deepEqual(splitCommandLine('claude --model opus'), ['claude', '--model', 'opus']);
  assert.deepEqual(splitCommandLine(`  aider "a b" 'c "d"' e\\ f "" `), ['aider', 'a b', 'c "d"', 'e f', '']);
  assert.deepEqual(splitCommandLine('echo "x\\"y" $HOME'), ['echo', 'x"y', '$HOME']);
  assert.throws(() => splitCommandLine('echo "open'), /unclosed " quote/);
});

test('New Agent Session offers the built-in agents, a shell, the custom entries and the ACP agents', () => {
  const c = agentChoices(
    {
      claudeCode: ['claude'],
      codex: ['codex', '--full-auto'],
      gemini: ['gemini'],
      opencode: [],
      shell: [],
      custom: [{ name: 'Demo', command: ['agentd', 'demo-agent'] }, { name: 'broken', command: [] }, { name: 'Kilo', command: ['kilo', 'acp'], protocol: 'acp' }],
      acp: DEFAULT_ACP_AGENTS,
    },
    '/bin/zsh',
  );
  assert.deepEqual(
    c.map((x) => [x.label, x.argv.join(' '), x.agent, x.protocol]),
    [
      ['Claude Code', 'claude', 'claude', undefined],
      ['Codex', 'codex --full-auto', 'codex', undefined],
      ['Gemini CLI', 'gemini', 'gemini', undefined],
      ['Shell', '/bin/zsh', 'shell', undefined],
      ['Demo', 'agentd demo-agent', undefined, undefined],
      ['Kilo', 'kilo acp', undefined, 'acp'],
      ['Claude Code (ACP)', 'claude-agent-acp', undefined, 'acp'],
      ['Codex (ACP)', 'codex-acp', undefined, 'acp'],
      ['Gemini CLI (ACP)', 'gemini --acp', undefined, 'acp'],
      ['Copilot (ACP)', 'copilot --acp', undefined, 'acp'],
      ['Qwen Code (ACP)', 'qwen --acp', undefined, 'acp'],
      ['OpenCode (ACP)', 'opencode acp', undefined, 'acp'],
    ],
  );
});

test('an ACP permission says what it is about when its question does not', () => {
  const base = { promptId: 'p', kind: 'permission', options: [], freeform: false };
  assert.equal(promptText({ ...base, question: 'Allow?', tool: { kind: 'execute', input: 'touch a.txt' } }), 'Allow? (execute: touch a.txt)');
  assert.equal(promptText({ ...base, question: '`touch a.txt`', tool: { kind: 'execute', input: 'touch a.txt' } }), '`touch a.txt`');
  assert.equal(promptText({ ...base, question: '', tool: { kind: 'other', input: '/etc/hosts' } }), '/etc/hosts');
  assert.equal(promptText({ ...base, question: 'Do you want to proceed?' }), 'Do you want to proceed?');
});
