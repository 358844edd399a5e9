// Answering, with the fake `vscode` and (where it matters) the real agentd:
// the notice with option buttons, the QuickPick, the errors told to the person.
import { fake, Uri, vscode } from './fake_vscode';

import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'os';

import { AgentdError } from '../../src/client';
import { sendSelection } from '../../src/commands';
import { Config } from '../../src/config';
import { buttonLabel, buttonLabelMax, Prompts } from '../../src/prompts';
import { AnswerParams, ErrorCodes, Prompt, Session, StateNotification, Subject } from '../../src/protocol';
import { SessionStore } from '../../src/sessions';
import { SubjectDocs } from '../../src/subject_view';
import { Supervisor } from '../../src/supervisor';
import { clientOptions, demoArgv, eventually } from './agentd';

const config = (notify: Partial<Config['notify']> = {}): Config =>
  ({ notify: { blocked: true, done: true, error: true, ...notify }, submitOnSend: true }) as Config;

let sup: Supervisor;
let store: SessionStore;
let prompts: Prompts;
let cfg: Config;
const opened: string[] = [];
// The real provider of the diff and command documents, on the fake vscode.
const subjects = new SubjectDocs();

before(async () => {
  sup = new Supervisor(() => clientOptions());
  await sup.start();
  // Wired as the extension wires it, to whichever store and Prompts the test has.
  sup.onState((n) => {
    store.applyState(n);
    prompts.onState(n);
  });
});

after(async () => {
  await sup.stop();
});

beforeEach(() => {
  fake.reset();
  cfg = config();
  store = new SessionStore();
  prompts = new Prompts(sup, store, () => cfg, (id) => opened.push(id), subjects);
});

/**
 * A demo session brought to its permission prompt (or past it, when the
 * notice is answered at once). The task decides what it asks about: "please
 * run X" the command X, "edit FILE" an edit of FILE with its diff, anything
 * else `touch NOTES.md`.
 */
async function blockedDemo(wait: () => unknown = () => store.blocked().length > 0, task = 'Add a NOTES.md file'): Promise<Session> {
  const s = await sup.spawn({ argv: demoArgv(), cwd: os.tmpdir(), name: 'Demo' });
  store.upsert(s);
  await eventually('idle', () => store.get(s.sessionId)?.state === 'idle', 30_000);
  await sup.send({ sessionId: s.sessionId, text: task, submit: true });
  await eventually('the blocked prompt', wait, 30_000);
  return store.get(s.sessionId)!;
}

test('blocked with attention: a warning with the question, the command and the three option buttons; a click answers and the agent goes on', async () => {
  fake.onMessage = (m) => (m.message.includes('needs you') ? 'Yes' : undefined);
  const s = await blockedDemo(() => fake.shown.length > 0);
  const notice = fake.shown.find((m) => m.message === 'Demo needs you: Do you want to proceed? — command: touch NOTES.md');
  assert.ok(notice, JSON.stringify(fake.shown));
  assert.equal(notice.severity, 'warning');
  assert.deepEqual(
    notice.items.map((i) => (typeof i === 'string' ? i : i.title)),
    ['Yes', "Yes, and don't ask…", 'No, and tell the…'],
  );
  await eventually('done', () => store.get(s.sessionId)?.state === 'done', 30_000);
  // What was approved is echoed.
  assert.ok(fake.statusMessages.some((m) => m.includes('answered "Yes" to command: touch NOTES.md')), fake.statusMessages.join(' | '));
  // The turn's end carries attention too: a notice with Open Terminal.
  await eventually('the done notice', () => fake.shown.find((m) => m.message === 'Demo finished its turn.'));
  await sup.kill({ sessionId: s.sessionId });
});

test('Answer Prompt: a QuickPick of every option; a pick after the prompt has gone is reported as not typed', async () => {
  const s = await blockedDemo();
  fake.onQuickPick = (qp) => {
    void (async () => {
      assert.equal(qp.title, 'Demo: Do you want to proceed? — command: touch NOTES.md');
      // A one-line command has nothing more to show.
      assert.deepEqual(qp.buttons, []);
      assert.deepEqual(
        qp.items.map((i) => i.label),
        ['$(pass) Yes', "$(pass) Yes, and don't ask again this session", '$(circle-slash) No, and tell the agent what to do differently'],
      );
      // The person answers in the terminal while the QuickPick is open…
      await sup.input({ sessionId: s.sessionId, data: '1' });
      await eventually('the prompt to leave the screen', async () => (await sup.classify(s.sessionId)).state !== 'blocked');
      // …then picks in it.
      qp.pick('Yes');
    })();
  };
  await prompts.answerPrompt();
  const stale = await eventually('the stale report', () => fake.shown.find((m) => m.message.includes('not typed')));
  assert.equal(stale.severity, 'warning');
  assert.equal(stale.message, `"Yes" not typed: Demo's prompt is gone.`);
  await sup.kill({ sessionId: s.sessionId });
});

test('Send Selection to a blocked agent shows its prompt instead (-32020 carries it)', async () => {
  const s = await blockedDemo();
  fake.shown = [];
  vscode.window.activeTextEditor = {
    selection: { isEmpty: false, active: { line: 0 } },
    document: { getText: () => 'also add a README', lineAt: () => ({ text: '' }) },
  };
  await sendSelection({ store, agentd: sup, prompts, terminals: { sessionOf: () => s.sessionId } as never, config: cfg });
  const m = fake.shown.find((x) => x.message.includes('was not sent'));
  assert.ok(m, JSON.stringify(fake.shown));
  assert.equal(m.message, 'Demo is waiting on a prompt, so the text was not sent. It asks: Do you want to proceed? — command: touch NOTES.md');
  assert.equal(m.items.length, 3);
  await sup.kill({ sessionId: s.sessionId });
});

test('a task that names a command: the notice shows that command, and the answer echoes it', async () => {
  fake.onMessage = (m) => (m.message.includes('needs you') ? 'Yes' : undefined);
  const s = await blockedDemo(() => fake.shown.length > 0, 'please run rm -rf build');
  const notice = fake.shown[0];
  assert.equal(notice.message, 'Demo needs you: Do you want to proceed? — command: rm -rf build');
  assert.equal(notice.items.length, 3, 'nothing more to show than the line');
  await eventually('the answer echoed', () => fake.statusMessages.find((m) => m.includes('answered "Yes" to command: rm -rf build')));
  await sup.kill({ sessionId: s.sessionId });
});

test('an edit: the notice names the file and offers "Show Diff", which opens a diff editor of the old and new text and brings the notice back', async () => {
  let shows = 0;
  fake.onMessage = (m) => (m.message.includes('needs you') && shows++ === 0 ? 'Show Diff' : undefined);
  const s = await blockedDemo(() => fake.shown.length >= 2, 'edit NOTES.md');
  const notice = fake.shown[0];
  assert.equal(notice.message, 'Demo needs you: Do you want to proceed? — edit: NOTES.md');
  assert.deepEqual(
    notice.items.map((i) => (typeof i === 'string' ? i : i.title)),
    ['Yes', "Yes, and don't…", 'No, and tell…', 'Show Diff'],
  );
  const diff = fake.commandsRun.find((c) => c.id === 'vscode.diff');
  assert.ok(diff, JSON.stringify(fake.commandsRun));
  const [left, right, title] = diff.args as [Uri, Uri, string];
  assert.equal(left.scheme, 'agentd-subject');
  assert.ok(left.path.endsWith('/NOTES.md') && right.path.endsWith('/NOTES.md'), `${left.path} ${right.path}`);
  assert.equal(subjects.text(left), '# NOTES.md\nTODO: write these notes\nSee README.md for the rest.\n');
  assert.equal(subjects.text(right), '# NOTES.md\nNotes kept by the demo agent.\n(demo: nothing is written)\nSee README.md for the rest.\n');
  assert.equal(title, 'NOTES.md: what Demo asks to change');
  // The notice closed with the click; it is back while the prompt waits.
  assert.equal(fake.shown[1].message, notice.message);

  // The QuickPick says the same, and its title button opens the diff too.
  fake.commandsRun = [];
  fake.onQuickPick = (qp) => {
    assert.equal(qp.title, 'Demo: Do you want to proceed? — edit: NOTES.md');
    qp.trigger('Show Diff');
    qp.pick('Yes');
  };
  await prompts.answerPrompt(s.sessionId);
  assert.equal(fake.commandsRun.filter((c) => c.id === 'vscode.diff').length, 1);
  await eventually('done', () => store.get(s.sessionId)?.state === 'done', 30_000);
  assert.ok(fake.statusMessages.some((m) => m.includes('answered "Yes" to edit: NOTES.md')), fake.statusMessages.join(' | '));
  await sup.kill({ sessionId: s.sessionId });
});

test('button labels fit the notice: long ones cut at a word, shorter when more buttons share the row', () => {
  const yes = "Yes, and don't ask again this session";
  const no = 'No, and tell the agent what to do differently';
  assert.equal(buttonLabelMax(['Yes', yes, no]), 22);
  assert.equal(buttonLabelMax(['Yes', yes, no, 'Show Diff']), 15);
  assert.equal(buttonLabel(yes), "Yes, and don't ask…");
  assert.equal(buttonLabel(no, 15), 'No, and tell…');
  assert.equal(buttonLabel('Supercalifragilisticexpialidocious', 10), 'Supercali…');
  assert.equal(buttonLabel('Yes'), 'Yes');
  assert.equal(buttonLabel('a\nb'), 'a b');
});

// The rest drive Prompts with a stand-in agentd, for answers the demo agent cannot give.
const bigPrompt: Prompt = {
  promptId: 'p9',
  kind: 'question',
  question: 'Which style?',
  options: ['Tabs', 'Spaces', 'Both', 'Neither'].map((label, i) => ({ id: String(i + 1), label })),
  freeform: true,
};

function standIn(answer: (p: AnswerParams) => Promise<unknown>) {
  const calls: AnswerParams[] = [];
  const agentd = {
    answer: async (p: AnswerParams) => {
      calls.push(p);
      return answer(p);
    },
  };
  const st = new SessionStore();
  st.upsert({ sessionId: 's7', name: 'Gemini', agent: 'gemini', argv: [], cwd: '', pid: 1, cols: 80, rows: 24, state: 'blocked', stateSource: 'screen', reason: 'r', since: new Date().toISOString(), prompt: bigPrompt });
  return { calls, p: new Prompts(agentd as never, st, () => cfg, (id) => opened.push(id), subjects), st };
}

const permission = (subject: Subject, promptId = 'p20'): Prompt => ({
  promptId,
  kind: 'permission',
  question: 'Do you want to proceed?',
  options: [
    { id: '1', label: 'Yes', kind: 'allow' },
    { id: '2', label: 'No', kind: 'reject' },
  ],
  freeform: false,
  subject,
});

test('a multi-line command: "Show Command" opens it whole, read-only, as a shell script', async () => {
  const { p, st } = standIn(async () => ({ state: 'working', stateSource: 'screen', reason: 'x' }));
  const script = 'for f in *.log; do\n  gzip "$f"\ndone';
  fake.onMessage = (m) => (fake.shown.length === 1 ? 'Show Command' : undefined);
  await p.showPrompt(st.get('s7')!, permission({ kind: 'command', text: 'for f in *.log; do gzip "$f"; done', detail: script }), 'needs you');
  assert.equal(fake.shown[0].message, 'Gemini needs you: Do you want to proceed? — command: for f in *.log; do gzip "$f"; done');
  assert.equal(fake.documents.length, 1);
  const { doc } = fake.documents[0];
  assert.equal(doc.uri.scheme, 'agentd-subject');
  assert.ok(doc.uri.path.endsWith('/command.sh'), doc.uri.path);
  assert.equal(doc.getText(), `${script}\n`);
});

test('a subject agentd could not read: the notice says so and offers the terminal', async () => {
  const { p, st } = standIn(async () => ({}));
  fake.onMessage = () => 'Open Terminal';
  await p.showPrompt(st.get('s7')!, permission({ kind: 'other', text: '', truncated: true }), 'needs you');
  assert.equal(fake.shown[0].message, 'Gemini needs you: Do you want to proceed? — agentd could not read what it approves: see the terminal');
  assert.deepEqual(
    fake.shown[0].items.map((i) => (typeof i === 'string' ? i : i.title)),
    ['Yes', 'No', 'Open Terminal'],
  );
  await eventually('the terminal opened', () => opened.includes('s7'));
  opened.length = 0;
  fake.onQuickPick = (qp) => {
    qp.trigger('Open Terminal');
    qp.hide();
  };
  await p.pick('s7', permission({ kind: 'other', text: '', truncated: true }));
  assert.deepEqual(opened, ['s7']);
});

test('a hostile subject stays text: no link in the notice, no icon in a label, bounded, and a cut one says "(cut)"', async () => {
  const { calls, p, st } = standIn(async () => ({ state: 'working', stateSource: 'screen', reason: 'x' }));
  const text = `[Approve](command:workbench.action.terminal.new) $(check) ${'y'.repeat(500)}`;
  fake.onMessage = () => undefined;
  const prompt: Prompt = { ...permission({ kind: 'command', text, truncated: true }), options: [{ id: '1', label: '$(pass) [ok](https://x.example)', kind: 'allow' }] };
  await p.showPrompt(st.get('s7')!, prompt, 'needs you');
  const m = fake.shown[0].message;
  assert.ok(!m.includes(']('), m);
  assert.ok(m.endsWith('… (cut)'), m.slice(-30));
  assert.ok(m.length < 300, `${m.length}`);
  fake.onQuickPick = (qp) => {
    assert.ok(!qp.title.includes('\n'));
    assert.equal(qp.items[0].label, '$(pass) \\$(pass) [ok](https://x.example)');
    qp.pick('ok');
  };
  await p.pick('s7', prompt);
  await eventually('the answer', () => calls.length === 1);
  const status = fake.statusMessages.at(-1)!;
  // One icon, agentd's own; the agent's $( are escaped.
  assert.equal(status.match(/(^|[^\\])\$\(/g)?.length, 1, status);
  assert.ok(status.startsWith('$(check) agentd: answered "\\$(pass) [ok](https://x.example)" to command: [Approve]'), status);
});

test('more than three options or free text: "More…" opens the QuickPick, where typed text is sent as the answer', async () => {
  const { calls, p, st } = standIn(async () => ({ state: 'working', stateSource: 'screen', reason: 'x' }));
  fake.onMessage = () => 'More…';
  fake.onQuickPick = (qp) => {
    qp.type('use tabs');
    qp.pick('use tabs');
  };
  await p.showPrompt(st.get('s7')!, bigPrompt, 'needs you');
  assert.deepEqual(
    fake.shown[0].items.map((i) => (typeof i === 'string' ? i : i.title)),
    ['Tabs', 'Spaces', 'Both', 'More…'],
  );
  await eventually('the answer', () => calls.length === 1);
  assert.deepEqual(calls[0], { sessionId: 's7', promptId: 'p9', text: 'use tabs' });
});

test('a prompt with no options it can read: "Reply…" takes typed text, and "Open Terminal" is there', async () => {
  const unread: Prompt = { promptId: 'p11', kind: 'permission', question: 'Steps done so far', options: [], freeform: true };
  const { calls, p, st } = standIn(async () => ({ state: 'working', stateSource: 'screen', reason: 'x' }));
  fake.onMessage = () => 'Reply…';
  fake.onQuickPick = (qp) => {
    qp.type('2');
    qp.pick('2');
  };
  await p.showPrompt(st.get('s7')!, unread, 'needs you');
  assert.deepEqual(
    fake.shown[0].items.map((i) => (typeof i === 'string' ? i : i.title)),
    ['Reply…', 'Open Terminal'],
  );
  await eventually('the answer', () => calls.length === 1);
  assert.deepEqual(calls[0], { sessionId: 's7', promptId: 'p11', text: '2' });
});

test('a prompt that changed: the new question and what it approves are told, and can be answered at once', async () => {
  const changed: Prompt = { ...bigPrompt, promptId: 'p10', question: 'Really?', subject: { kind: 'command', text: 'rm -rf ~/projects' } };
  const { calls, p } = standIn(async (a) => {
    if (a.promptId === 'p9') throw new AgentdError('runtime_answer', ErrorCodes.PromptStale, 'stale', { prompt: changed });
    return { state: 'working', stateSource: 'screen', reason: 'x' };
  });
  fake.onMessage = (m) => (m.message.includes('changed') ? 'Answer It' : undefined);
  fake.onQuickPick = (qp) => qp.pick('Spaces');
  await p.submit('s7', bigPrompt, { optionId: '1', label: 'Tabs' });
  assert.equal(fake.shown[0].message, `"Tabs" not typed: Gemini's prompt changed. It now asks: Really? — command: rm -rf ~/projects`);
  await eventually('the second answer', () => calls.length === 2);
  assert.deepEqual(calls[1], { sessionId: 's7', promptId: 'p10', optionId: '2' });
});

test('already answered (-32025) is told as information; an answer agentd cannot type (-32024) as an error with Open Terminal', async () => {
  let code: number = ErrorCodes.AlreadyAnswered;
  const { p } = standIn(async () => {
    throw new AgentdError('runtime_answer', code, 'no');
  });
  assert.equal(await p.submit('s7', bigPrompt, { optionId: '1', label: 'Tabs' }), false);
  assert.equal(fake.shown[0].severity, 'info');
  assert.match(fake.shown[0].message, /already answered/);
  code = ErrorCodes.NotAnswerable;
  fake.onMessage = () => 'Open Terminal';
  await p.submit('s7', bigPrompt, { optionId: '1', label: 'Tabs' });
  assert.equal(fake.shown[1].severity, 'error');
  await eventually('the terminal opened', () => opened.includes('s7'));
});

test('no notice without attention, or when notifications are off', () => {
  const { p, st } = standIn(async () => ({}));
  const n: StateNotification = { sessionId: 's7', agent: 'gemini', state: 'blocked', previous: 'working', stateSource: 'screen', reason: 'r', since: '', attention: false, prompt: bigPrompt };
  p.onState(n);
  assert.equal(fake.shown.length, 0);
  cfg = config({ blocked: false });
  p.onState({ ...n, attention: true });
  assert.equal(fake.shown.length, 0);
  cfg = config();
  p.onState({ ...n, attention: true });
  assert.equal(fake.shown.length, 1);
  assert.ok(st.get('s7'));
});
