// What a person reads: the badge text, durations, state labels, command lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { agentChoices, DEFAULT_ACP_AGENTS } from '../../src/agents';
import { badgeText, diffFiles, duration, escapeIcons, mdCodeBlock, mdEscape, noLinks, oneLine, promptText, splitCommandLine, splitDiff, stateLabel, subjectAction, subjectLine, urgentState } from '../../src/format';
import { Prompt, Session, Subject } from '../../src/protocol';
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

test('a prompt says what it approves, on one line: the question, then the subject', () => {
  const base: Prompt = { promptId: 'p', kind: 'permission', question: 'Do you want to proceed?', options: [], freeform: false };
  const p = (subject?: Subject, question = base.question) => promptText({ ...base, question, subject });
  assert.equal(p(), 'Do you want to proceed?');
  assert.equal(p({ kind: 'command', text: 'rm -rf build', detail: 'rm -rf build' }), 'Do you want to proceed? — command: rm -rf build');
  assert.equal(p({ kind: 'edit', text: 'NOTES.md', detail: '-a\n+b' }), 'Do you want to proceed? — edit: NOTES.md');
  assert.equal(p({ kind: 'fetch', text: 'https://example.com/x', truncated: true }), 'Do you want to proceed? — fetch: https://example.com/x (cut)');
  // agentd saw a subject it could not read: the person is sent to the terminal.
  assert.equal(p({ kind: 'other', text: '', truncated: true }), 'Do you want to proceed? — agentd could not read what it approves: see the terminal');
  // An ACP permission whose question names the command already; one with no question.
  assert.equal(p({ kind: 'command', text: 'touch a.txt' }, '`touch a.txt`'), '`touch a.txt`');
  assert.equal(p({ kind: 'read', text: '/etc/hosts' }, ''), 'read: /etc/hosts');
  assert.equal(p({ kind: 'tool', text: 'mcp__db__query' }, 'Allow?'), 'Allow? — tool: mcp__db__query');
  // Newlines never reach a one-line place, and a 10,000-character command is bounded.
  assert.equal(p({ kind: 'command', text: 'echo a\nrm -rf ~\r\tx' }), 'Do you want to proceed? — command: echo a rm -rf ~ x');
  const long = p({ kind: 'command', text: `echo ${'x'.repeat(10_000)}` });
  assert.ok(long.length < 250, `${long.length} characters`);
  assert.ok(long.endsWith('…'), long.slice(-20));
  assert.equal(oneLine('  a \n b  '), 'a b');
  assert.equal(subjectLine({ kind: 'command', text: 'make test' }), 'command: make test');
});

test('"Show Diff" for a change, "Show Command" for a command with more than its line, nothing when the line says it all', () => {
  assert.equal(subjectAction(undefined), undefined);
  assert.equal(subjectAction({ kind: 'command', text: 'rm -rf build', detail: 'rm -rf build' }), undefined);
  // A command wrapped on the screen is the same command.
  assert.equal(subjectAction({ kind: 'command', text: 'npm run build -- --watch', detail: 'npm run build --\n  --watch' }), undefined);
  assert.equal(subjectAction({ kind: 'command', text: 'for f in *; do echo $f; done', detail: 'for f in *; do\n  echo $f\ndone' }), 'Show Command');
  assert.equal(subjectAction({ kind: 'command', text: `echo ${'x'.repeat(120)}` }), 'Show Command');
  assert.equal(subjectAction({ kind: 'edit', text: 'NOTES.md', detail: ' # NOTES.md\n-TODO\n+Done' }), 'Show Diff');
  assert.equal(subjectAction({ kind: 'write', text: 'new.txt', detail: 'hello\nworld' }), 'Show Diff');
  assert.equal(subjectAction({ kind: 'edit', text: 'NOTES.md' }), undefined);
  assert.equal(subjectAction({ kind: 'fetch', text: 'https://example.com', detail: 'Summarize the page' }), 'Show Details');
  assert.equal(subjectAction({ kind: 'other', text: '', truncated: true }), undefined);
});

test('a unified diff splits into the old and new text of each file; hunks apart are marked', () => {
  const udiff = [
    '--- a/src/app.ts',
    '+++ b/src/app.ts',
    '@@ -1,3 +1,3 @@',
    ' const a = 1;',
    '-const b = 2;',
    '+const b = 3;',
    ' const c = 4;',
    '@@ -10,2 +10,3 @@',
    ' x();',
    '+y();',
    '\\ No newline at end of file',
    '--- /dev/null',
    '+++ new.txt',
    '@@ -0,0 +1,2 @@',
    '+hello',
    '+world',
  ].join('\n');
  assert.deepEqual(splitDiff(udiff), [
    { path: 'src/app.ts', oldText: 'const a = 1;\nconst b = 2;\nconst c = 4;\n⋯\nx();\n', newText: 'const a = 1;\nconst b = 3;\nconst c = 4;\n⋯\nx();\ny();\n' },
    { path: 'new.txt', oldText: '', newText: 'hello\nworld\n' },
  ]);
  // ACP's diff of a deleted file names the old path.
  assert.deepEqual(splitDiff('--- gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n'), [{ path: 'gone.txt', oldText: 'bye\n', newText: '' }]);
});

test('rows as an agent drew them split too: without headers, with line numbers, with a file heading each', () => {
  // The demo agent: the body of a unified diff, no headers; the path is the subject's text.
  const demo: Subject = { kind: 'edit', text: 'NOTES.md', detail: ' # NOTES.md\n-TODO: write these notes\n+Notes kept by the demo agent.\n+(demo: nothing is written)\n See README.md for the rest.' };
  assert.deepEqual(diffFiles(demo), [
    { path: 'NOTES.md', oldText: '# NOTES.md\nTODO: write these notes\nSee README.md for the rest.\n', newText: '# NOTES.md\nNotes kept by the demo agent.\n(demo: nothing is written)\nSee README.md for the rest.\n' },
  ]);
  // Codex: a line number before each row's marker.
  assert.deepEqual(splitDiff('2 -second line\n2 +second line, edited\n4 +fourth line'), [{ path: undefined, oldText: 'second line\n', newText: 'second line, edited\nfourth line\n' }]);
  // Codex with two files, each under "└ path (+n -m)".
  assert.deepEqual(splitDiff('└ notes.txt (+1 -0)\n  4 +fifth line\n\n└ one.txt (+1 -0)\n  1 +one'), [
    { path: 'notes.txt', oldText: '', newText: 'fifth line\n' },
    { path: 'one.txt', oldText: '', newText: 'one\n' },
  ]);
  // No row adds or removes: not a diff. A write's content is the new file.
  assert.equal(splitDiff('just some text\nand more'), undefined);
  assert.equal(diffFiles({ kind: 'edit', text: 'x', detail: 'no change rows' }), undefined);
  assert.deepEqual(diffFiles({ kind: 'write', text: 'dir/new.txt', detail: 'hello\nworld' }), [{ path: 'dir/new.txt', oldText: '', newText: 'hello\nworld\n' }]);
});

test('untrusted text is escaped for where it lands: markdown, labels with icons, notifications that parse links', () => {
  const hostile = '[Yes](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%22%7D) <script>alert(1)</script> `x` **b** $(alert) &lt; https://evil.example';
  const md = mdEscape(hostile);
  // No markdown construct survives: no link, no HTML, no code, no emphasis, no entity, no autolink, no icon.
  assert.ok(!/(^|[^\\])[[\]()<>`*&$:]/.test(md), md);
  assert.equal(md.replace(/\\(.)/g, '$1'), hostile, 'unescaped it reads the same');
  // A code block the text cannot close.
  const block = mdCodeBlock('a\n```\n[x](command:y)\n````', 'sh');
  assert.ok(block.startsWith('\n`````sh\n'), block);
  assert.ok(block.endsWith('\n`````\n'), block);
  assert.equal(escapeIcons('$(alert) ok $(x)'), '\\$(alert) ok \\$(x)');
  const note = noLinks(hostile);
  assert.ok(!note.includes(']('), note);
  assert.equal(note.replace(/\u200b/g, ''), hostile);
});
