// Answering, with the fake `vscode` and (where it matters) the real agentd:
// the notice with option buttons, the QuickPick, the errors told to the person.
import { fake, vscode } from './fake_vscode';

import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'os';

import { AgentdError } from '../../src/client';
import { sendSelection } from '../../src/commands';
import { Config } from '../../src/config';
import { Prompts } from '../../src/prompts';
import { AnswerParams, ErrorCodes, Prompt, Session, StateNotification } from '../../src/protocol';
import { SessionStore } from '../../src/sessions';
import { Supervisor } from '../../src/supervisor';
import { clientOptions, demoArgv, eventually } from './agentd';

const config = (notify: Partial<Config['notify']> = {}): Config =>
  ({ notify: { blocked: true, done: true, error: true, ...notify }, submitOnSend: true }) as Config;

let sup: Supervisor;
let store: SessionStore;
let prompts: Prompts;
let cfg: Config;
const opened: string[] = [];

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
  prompts = new Prompts(sup, store, () => cfg, (id) => opened.push(id));
});

/** A demo session brought to its permission prompt (or past it, when the notice is answered at once). */
async function blockedDemo(wait: () => unknown = () => store.blocked().length > 0): Promise<Session> {
  const s = await sup.spawn({ argv: demoArgv(), cwd: os.tmpdir(), name: 'Demo' });
  store.upsert(s);
  await eventually('idle', () => store.get(s.sessionId)?.state === 'idle', 30_000);
  await sup.send({ sessionId: s.sessionId, text: 'Add a NOTES.md file', submit: true });
  await eventually('the blocked prompt', wait, 30_000);
  return store.get(s.sessionId)!;
}

test('blocked with attention: a warning with the question and the three option buttons; a click answers and the agent goes on', async () => {
  fake.onMessage = (m) => (m.message.includes('needs you') ? 'Yes' : undefined);
  const s = await blockedDemo(() => fake.shown.length > 0);
  const notice = fake.shown.find((m) => m.message === 'Demo needs you: Do you want to proceed?');
  assert.ok(notice, JSON.stringify(fake.shown));
  assert.equal(notice.severity, 'warning');
  assert.deepEqual(
    notice.items.map((i) => (typeof i === 'string' ? i : i.title)),
    ['Yes', "Yes, and don't ask ag…", 'No, and tell the agen…'],
  );
  await eventually('done', () => store.get(s.sessionId)?.state === 'done', 30_000);
  assert.ok(fake.statusMessages.some((m) => m.includes('answered "Yes"')), fake.statusMessages.join(' | '));
  // The turn's end carries attention too: a notice with Open Terminal.
  await eventually('the done notice', () => fake.shown.find((m) => m.message === 'Demo finished its turn.'));
  await sup.kill({ sessionId: s.sessionId });
});

test('Answer Prompt: a QuickPick of every option; a pick after the prompt has gone is reported as not typed', async () => {
  const s = await blockedDemo();
  fake.onQuickPick = (qp) => {
    void (async () => {
      assert.equal(qp.title, 'Demo: Do you want to proceed?');
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
  assert.equal(m.message, 'Demo is waiting on a prompt, so the text was not sent. It asks: Do you want to proceed?');
  assert.equal(m.items.length, 3);
  await sup.kill({ sessionId: s.sessionId });
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
  return { calls, p: new Prompts(agentd as never, st, () => cfg, (id) => opened.push(id)), st };
}

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

test('a prompt that changed: the new question is told and can be answered at once', async () => {
  const changed: Prompt = { ...bigPrompt, promptId: 'p10', question: 'Really?' };
  const { calls, p } = standIn(async (a) => {
    if (a.promptId === 'p9') throw new AgentdError('runtime_answer', ErrorCodes.PromptStale, 'stale', { prompt: changed });
    return { state: 'working', stateSource: 'screen', reason: 'x' };
  });
  fake.onMessage = (m) => (m.message.includes('changed') ? 'Answer It' : undefined);
  fake.onQuickPick = (qp) => qp.pick('Spaces');
  await p.submit('s7', bigPrompt, { optionId: '1', label: 'Tabs' });
  assert.equal(fake.shown[0].message, `"Tabs" not typed: Gemini's prompt changed. It now asks: Really?`);
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
