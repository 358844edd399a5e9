// Several hosts in a real VS Code (code-server): this machine and two
// others, a and b, reached over real ssh (OpenSSH servers on loopback,
// each with a daemon of its own: cmd/agentd-sshhosts, rpc/hosts/hoststest).
// Each has a demo session with the same id and name; a's and b's wait on
// the same prompt. The Sessions view groups them under a row per host;
// "Answer Prompt" names each host, and answering b's answers it on b only
// (a's still waits with the same promptId, as `agentd ls -H a --json`
// says); b taken off the network shows down, with its session still
// listed, and comes back up.
//
// Needs what e2e.test.mjs needs, and /usr/sbin/sshd (skipped without it,
// unless AGENTD_REQUIRE_AGENTS is set) and go, to build the helper.
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { need, startWorkbench, waitFor } from './workbench.mjs';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const AGENTD = need('AGENTD_BIN');
const HAVE_SSHD = existsSync('/usr/sbin/sshd');
if (!HAVE_SSHD && process.env.AGENTD_REQUIRE_AGENTS) throw new Error('the OpenSSH server (/usr/sbin/sshd) is not installed');

const tmp = mkdtempSync(join(tmpdir(), 'agentd-vscode-hosts-'));
const cfgHome = join(tmp, 'config');
// The CLI that looks at the hosts, as a person would: the same config.toml, a socket of its own here.
const cliEnv = { ...process.env, XDG_CONFIG_HOME: cfgHome, XDG_STATE_HOME: join(tmp, 'state'), AGENTD_SOCKET: join(tmp, 'run', 'agentd.sock') };
delete cliEnv.AGENTD_SESSION;
let helper;
let helperLines;
let wbx;
let wb;
const promptIds = {};

let failed;
const test = (name, fn) =>
  nodeTest(name, { skip: HAVE_SSHD ? false : 'no /usr/sbin/sshd' }, async () => {
    if (failed) throw new Error(`not run: "${failed}" failed`);
    try {
      await fn();
    } catch (e) {
      failed = name;
      await wb?.shot(`failed-hosts-${name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => undefined);
      throw e;
    }
  });

const cli = (...args) => execFileSync(AGENTD, args, { env: cliEnv, encoding: 'utf8', timeout: 90_000 }).trim();
const ls = (host) => JSON.parse(cli('ls', '-H', host, '--json')).sessions;
const badgeSays = (re, timeoutMs = 20_000) => waitFor(`the badge to say ${re}`, async () => re.test(await wb.badgeText()), timeoutMs, 50);
const rowWith = (...words) => waitFor(`a Sessions row with ${words.join(', ')}`, async () => (await wb.treeRows()).find((r) => words.every((w) => r.includes(w))), 60_000);

/** Tells the helper to take a host down or bring it up; resolves on its "ok". */
async function helperSays(line) {
  helper.stdin.write(line + '\n');
  const { value } = await helperLines.next();
  assert.equal(value, 'ok', `agentd-sshhosts answered ${value} to ${line}`);
}

before(async () => {
  if (!HAVE_SSHD) return;
  const bin = join(tmp, 'agentd-sshhosts');
  execFileSync('go', ['build', '-o', bin, './cmd/agentd-sshhosts'], { cwd: REPO, stdio: 'inherit' });
  helper = spawn(bin, ['-agentd', AGENTD, '-config', cfgHome, 'a', 'b'], { stdio: ['pipe', 'pipe', 'inherit'] });
  helperLines = createInterface({ input: helper.stdout })[Symbol.asyncIterator]();
  const first = await helperLines.next();
  JSON.parse(first.value);
  // Each host: a demo session named demo (s1 there too), brought to the same prompt.
  for (const h of ['a', 'b']) {
    assert.equal(cli('run', '-H', h, '--name', 'demo', '--', AGENTD, 'demo-agent'), 's1');
    cli('wait', `${h}:demo`, '--until', 'idle', '--timeout', '60s');
    cli('send', `${h}:demo`, 'Add a NOTES.md file');
    cli('wait', `${h}:demo`, '--until', 'blocked', '--timeout', '60s');
    promptIds[h] = ls(h)[0].prompt.promptId;
  }
  assert.notEqual(promptIds.a, promptIds.b, 'promptIds are salted per session');
  wbx = await startWorkbench({
    vsix: need('VSIX'),
    node24: need('CODE_SERVER_NODE'),
    entry: need('CODE_SERVER'),
    chromiumPath: need('CHROMIUM', '/usr/bin/chromium'),
    artifacts: need('ARTIFACTS'),
    agentd: AGENTD,
    configToml: readFileSync(join(cfgHome, 'agentd', 'config.toml'), 'utf8'),
    machineSettings: { 'agentd.path': AGENTD },
    userSettings: {
      'agentd.cooldown': '1s',
      'agentd.trace.server': 'messages',
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'chat.disableAIFeatures': true,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'extensions.ignoreRecommendations': true,
      'update.mode': 'none',
      'window.restoreWindows': 'none',
    },
  });
  wb = wbx.workbench;
});

after(async () => {
  if (wb) await wb.shot('zz-hosts-last').catch(() => undefined);
  await wbx?.stop();
  if (helper) {
    helper.stdin.end();
    await new Promise((r) => {
      helper.once('exit', r);
      setTimeout(r, 20_000);
    });
  }
  rmSync(tmp, { recursive: true, force: true });
});

test("the Sessions view shows every host's sessions under a row per host; the badge counts both hosts' prompts", async () => {
  // This machine's own demo, with the same id and name as the others'.
  await badgeSays(/agentd|blocked/, 60_000);
  assert.equal(execFileSync(AGENTD, ['run', '--name', 'demo', '--', AGENTD, 'demo-agent'], { env: wbx.env, cwd: wbx.folder, encoding: 'utf8', timeout: 60_000 }).trim(), 's1');
  await badgeSays(/2 blocked/, 60_000);
  await wb.runCommand('agentd: Focus on Sessions View');
  await rowWith('host local', 'this machine', 'up');
  await rowWith('host a', 'up', '1 blocked');
  await rowWith('host b', 'up', '1 blocked');
  await waitFor('three demo rows, two of them asking', async () => {
    const rows = await wb.treeRows();
    return rows.filter((r) => r.startsWith('demo,')).length === 3 && rows.filter((r) => r.includes('Do you want to proceed?') && r.startsWith('demo,')).length === 2;
  });
  await wb.settle?.();
  await wb.shot('20-hosts-sessions-view', wb.sessionsView());
});

test("Answer Prompt names each host; answering b's answers it on b only, and a's waits on with the same promptId", async () => {
  await wb.runCommand('agentd: Answer Prompt');
  const items = await wb.quickItems('demo on b');
  assert.ok(items.some((i) => i.includes('demo on a')), items.join(' | '));
  await wb.shot('21-hosts-answer-which');
  await wb.pickQuickItem('demo on b');
  await wb.quickInput().locator('.quick-input-title', { hasText: 'demo on b: Do you want to proceed?' }).waitFor({ state: 'visible' });
  await wb.pickQuickItem('Yes');
  await waitFor("b's demo past its prompt", async () => ls('b')[0].state !== 'blocked', 30_000);
  const a = ls('a')[0];
  assert.equal(a.state, 'blocked', "a's demo still waits");
  assert.equal(a.prompt.promptId, promptIds.a, 'on the same prompt');
  await badgeSays(/1 blocked/, 20_000);
  await rowWith('host b', 'up');
  await rowWith('host a', '1 blocked');
});

test('b taken off the network shows down (its session still listed), and comes back up', async () => {
  await helperSays('down b');
  await rowWith('host b', 'down');
  assert.equal((await wb.treeRows()).filter((r) => r.startsWith('demo,')).length, 3, "b's session is still listed, not ended");
  await wb.shot('22-hosts-b-down', wb.sessionsView());
  await helperSays('up b');
  await rowWith('host b', 'up', '1 session');
  assert.notEqual(ls('b')[0].state, 'exited');
  await wb.shot('23-hosts-b-back', wb.sessionsView());
});

test("a's daemon stopped: a shows no daemon (the window starts none there), and b is unaffected", async () => {
  await helperSays('stop a');
  await rowWith('host a', 'no daemon');
  await rowWith('host b', 'up', '1 session');
  await wb.shot('24-hosts-a-no-daemon', wb.sessionsView());
  // --no-start: nothing started a daemon on a.
  const a = JSON.parse(cli('hosts', '--json')).hosts.find((h) => h.name === 'a');
  assert.equal(a?.state, 'no daemon', JSON.stringify(a));
});
