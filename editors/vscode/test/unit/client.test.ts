// The protocol client against the real agentd binary and its demo agent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'os';

import { AgentdClient, AgentdError, isAgentdError, StartError } from '../../src/client';
import { ErrorCodes, OutputNotification, PROTOCOL_VERSION } from '../../src/protocol';
import { agentdBin, daemonEnv, demoArgv, eventually, newSocket, startAgentd, StateLog } from './agentd';

let client: AgentdClient;
let states: StateLog;

before(async () => {
  client = await startAgentd();
  states = new StateLog(client);
});

after(async () => {
  await client?.stop();
});

test('initialize: agentd answers with protocol 1 and the agents it has rules for', () => {
  assert.equal(client.info.protocolVersion, PROTOCOL_VERSION);
  assert.equal(client.info.serverInfo.name, 'agentd');
  const names = client.info.agents.map((a) => a.name);
  for (const a of ['demo', 'generic', 'shell']) assert.ok(names.includes(a), `agents include ${a}: ${names}`);
});

test('a demo session goes idle → working → blocked (with attention and its prompt) → working → done → idle', async () => {
  const s = await client.spawn({ argv: demoArgv(), cwd: os.tmpdir(), name: 'Demo', cols: 100, rows: 30 });
  assert.equal(s.name, 'Demo');
  assert.equal(s.agent, 'demo');
  assert.equal(s.cols, 100);
  assert.ok(s.pid > 0);
  await states.waitFor(s.sessionId, 'idle');

  await client.send({ sessionId: s.sessionId, text: 'Add a NOTES.md file', submit: true });
  await states.waitFor(s.sessionId, 'working');
  const blocked = await states.waitFor(s.sessionId, 'blocked');
  assert.equal(blocked.attention, true);
  assert.equal(blocked.prompt?.question, 'Do you want to proceed?');
  assert.deepEqual(
    blocked.prompt?.options.map((o) => [o.id, o.label]),
    [
      ['1', 'Yes'],
      ['2', "Yes, and don't ask again this session"],
      ['3', 'No, and tell the agent what to do differently'],
    ],
  );
  // What it approves: the command its task asked for.
  assert.deepEqual(blocked.prompt?.subject, { kind: 'command', text: 'touch NOTES.md', detail: 'touch NOTES.md' });
  const listed = (await client.list()).find((x) => x.sessionId === s.sessionId);
  assert.equal(listed?.state, 'blocked');
  assert.equal(listed?.prompt?.promptId, blocked.prompt?.promptId);

  // runtime_send is refused while blocked, and the error carries the prompt.
  await assert.rejects(client.send({ sessionId: s.sessionId, text: 'more' }), (e: unknown) => {
    assert.ok(isAgentdError(e, ErrorCodes.SessionBlocked), String(e));
    assert.equal((e as AgentdError).prompt?.promptId, blocked.prompt?.promptId);
    return true;
  });

  states.clear();
  const r = await client.answer({ sessionId: s.sessionId, promptId: blocked.prompt!.promptId, optionId: '1' });
  assert.equal(r.state, 'working');
  const done = await states.waitFor(s.sessionId, 'done');
  assert.equal(done.outcome, 'completed');
  assert.equal(done.attention, true);

  await client.seen(s.sessionId);
  await states.waitFor(s.sessionId, 'idle');
  await client.kill({ sessionId: s.sessionId });
});

test('an edit prompt carries its subject: the file, and the change as diff rows', async () => {
  const s = await client.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await states.waitFor(s.sessionId, 'idle');
  await client.send({ sessionId: s.sessionId, text: 'edit NOTES.md', submit: true });
  const blocked = await states.waitFor(s.sessionId, 'blocked');
  assert.deepEqual(blocked.prompt?.subject, {
    kind: 'edit',
    text: 'NOTES.md',
    detail: ' # NOTES.md\n-TODO: write these notes\n+Notes kept by the demo agent.\n+(demo: nothing is written)\n See README.md for the rest.',
  });
  await client.kill({ sessionId: s.sessionId });
});

test('a stale answer fails with -32021 and the prompt now on screen (none)', async () => {
  const s = await client.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await states.waitFor(s.sessionId, 'idle');
  await client.send({ sessionId: s.sessionId, text: 'go', submit: true });
  const blocked = await states.waitFor(s.sessionId, 'blocked');
  // The person answers in the terminal first…
  await client.input({ sessionId: s.sessionId, data: '1' });
  await eventually('the prompt to leave', async () => (await client.classify(s.sessionId)).state !== 'blocked');
  // …then the editor's answer arrives.
  await assert.rejects(client.answer({ sessionId: s.sessionId, promptId: blocked.prompt!.promptId, optionId: '1' }), (e: unknown) => {
    assert.ok(isAgentdError(e, ErrorCodes.PromptStale), String(e));
    assert.equal((e as AgentdError).prompt, null);
    return true;
  });
  await client.kill({ sessionId: s.sessionId });
});

test('answering with an option the prompt does not have fails with -32022', async () => {
  const s = await client.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await states.waitFor(s.sessionId, 'idle');
  await client.send({ sessionId: s.sessionId, text: 'go', submit: true });
  const blocked = await states.waitFor(s.sessionId, 'blocked');
  await assert.rejects(client.answer({ sessionId: s.sessionId, promptId: blocked.prompt!.promptId, optionId: '9' }), (e: unknown) =>
    isAgentdError(e, ErrorCodes.OptionUnknown),
  );
  await client.kill({ sessionId: s.sessionId });
});

test('watchOutput: a repaint first, live output after, shared between two watchers; input and resize reach the agent', async () => {
  const s = await client.spawn({ argv: demoArgv(), cwd: os.tmpdir(), cols: 80, rows: 24 });
  await states.waitFor(s.sessionId, 'idle');
  const a: OutputNotification[] = [];
  const b: OutputNotification[] = [];
  const wa = await client.watchOutput(s.sessionId, (n) => a.push(n));
  await eventually('the repaint', () => a.some((n) => n.data.includes('Welcome to the agentd demo agent')));
  const wb = await client.watchOutput(s.sessionId, (n) => b.push(n));
  await eventually('a repaint for the second watcher', () => b.some((n) => n.data.includes('Welcome')));
  await client.input({ sessionId: s.sessionId, data: 'hello' });
  await eventually('the typed text echoed to both', () => a.some((n) => n.data.includes('hello')) && b.some((n) => n.data.includes('hello')));
  wa.dispose();
  await client.resize({ sessionId: s.sessionId, cols: 90, rows: 30 });
  const screen = await client.read(s.sessionId);
  assert.ok(screen.rows.some((r) => r.includes('> hello')), screen.rows.join('\n'));
  wb.dispose();
  await client.kill({ sessionId: s.sessionId });
});

test('kill: the session turns exited and session/exited follows; requests to it then fail', async () => {
  const s = await client.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await states.waitFor(s.sessionId, 'idle');
  const exited = new Promise<{ signal?: string }>((r) => client.onExited((n) => n.sessionId === s.sessionId && r(n)));
  await client.kill({ sessionId: s.sessionId, signal: 'TERM' });
  await states.waitFor(s.sessionId, 'exited');
  assert.equal((await exited).signal, 'SIGTERM');
  await assert.rejects(client.send({ sessionId: s.sessionId, text: 'x' }), (e: unknown) => isAgentdError(e, ErrorCodes.SessionExited) || isAgentdError(e, ErrorCodes.SessionNotFound));
  await assert.rejects(client.seen('s999'), (e: unknown) => isAgentdError(e, ErrorCodes.SessionNotFound));
});

test('spawn of a missing program fails with -32012', async () => {
  await assert.rejects(client.spawn({ argv: ['/nonexistent/agent'], cwd: os.tmpdir() }), (e: unknown) => isAgentdError(e, ErrorCodes.SpawnFailed));
});

test('stop with --private: shutdown ends agentd and the sessions it hosts', async () => {
  const c = await startAgentd({ args: ['--cooldown', '1s', '--private'] });
  assert.equal(c.private, true);
  const log = new StateLog(c);
  const s = await c.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await log.waitFor(s.sessionId, 'idle');
  const x = await c.stop();
  assert.equal(x.expected, true);
  assert.equal(c.running, false);
  assert.throws(() => process.kill(s.pid, 0), /ESRCH/, 'the agent process is gone');
  await assert.rejects(c.list(), (e: unknown) => e instanceof AgentdError);
});

test('stop through the daemon closes only this connection: a new one finds the session, blocked, and answers it', async () => {
  const sock = newSocket();
  const c = await startAgentd({ env: daemonEnv(sock), workspaceFolders: [os.tmpdir()] });
  assert.equal(c.private, false);
  assert.ok(c.info.daemon && c.info.daemon.pid !== c.pid, 'the sessions belong to a daemon, not to the forwarder');
  const log = new StateLog(c);
  const s = await c.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await log.waitFor(s.sessionId, 'idle');
  await c.send({ sessionId: s.sessionId, text: 'Add a NOTES.md file', submit: true });
  await log.waitFor(s.sessionId, 'working');
  const x = await c.stop();
  assert.equal(x.code, 0, 'the forwarder exits 0');
  process.kill(s.pid, 0); // still there

  const d = await startAgentd({ env: daemonEnv(sock) });
  assert.equal(d.info.daemon?.instance, c.info.daemon?.instance);
  const log2 = new StateLog(d);
  const [listed] = (await d.list()).filter((x) => x.sessionId === s.sessionId);
  assert.deepEqual(listed.origin, { client: 'agentd-vscode-tests', workspaceFolders: [os.tmpdir()] });
  const blocked = listed.state === 'blocked' && listed.prompt?.options.length ? listed : await log2.waitFor(s.sessionId, 'blocked');
  await d.answer({ sessionId: s.sessionId, promptId: blocked.prompt!.promptId, optionId: '1' });
  const done = await log2.waitFor(s.sessionId, 'done');
  assert.equal(done.outcome, 'completed');
  await d.kill({ sessionId: s.sessionId });
  await log2.waitFor(s.sessionId, 'exited');
  await d.stop();
});

test('stopDaemon refuses while sessions run, naming them, and with force ends them', async () => {
  const sock = newSocket();
  const c = await startAgentd({ env: daemonEnv(sock) });
  const log = new StateLog(c);
  const s = await c.spawn({ argv: demoArgv(), cwd: os.tmpdir() });
  await log.waitFor(s.sessionId, 'idle');
  await assert.rejects(c.stopDaemon(false), (e: unknown) => {
    assert.ok(e instanceof AgentdError);
    assert.equal(e.code, ErrorCodes.SessionsRunning);
    assert.match(e.message, /1 session\(s\) still run: s1 \(Demo agent, idle\)/);
    return true;
  });
  assert.equal(c.running, true);
  await c.stopDaemon(true);
  // The daemon ended the session, then every connection (its exited
  // notification may go down with this one).
  const x = await c.exited;
  assert.equal(x.expected, true, 'the end of the connection was asked for');
  await eventually('the agent to be gone', () => {
    try {
      process.kill(s.pid, 0);
      return false;
    } catch {
      return true;
    }
  });
});

test('start: a missing binary is a StartError that says what to do', async () => {
  await assert.rejects(AgentdClient.start({ path: '/nonexistent/agentd' }), (e: unknown) => {
    assert.ok(e instanceof StartError);
    assert.equal(e.notFound, true);
    assert.match(e.message, /agentd\.path/);
    return true;
  });
  assert.ok(agentdBin());
});
