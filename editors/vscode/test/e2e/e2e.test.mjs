// End to end in a real VS Code (code-server) with the extension installed
// from its .vsix: a session hosting agentd's demo agent goes blocked, the
// badge and a notification show it, the answer is picked in the QuickPick,
// the agent continues, the badge updates; then the session outlives a
// window reload and a killed forwarder, and a killed daemon is reported with
// the sessions that ended. Screenshots go to $ARTIFACTS.
//
// Needs AGENTD_BIN, VSIX, CODE_SERVER (its out/node/entry.js), CODE_SERVER_NODE
// (Node 24), ARTIFACTS, and CHROMIUM (default /usr/bin/chromium).
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

import { need, startWorkbench, waitFor } from './workbench.mjs';

const AGENTD = need('AGENTD_BIN');
// The real Copilot CLI from the pinned agents (make agents): over ACP,
// offline, with no login, it asks for one. With AGENTD_REQUIRE_AGENTS set
// (make test) a missing one fails the step; otherwise the step is skipped.
const COPILOT = join(process.env.AGENTD_AGENTS_CACHE || join(homedir(), '.cache', 'agentd-agents'), 'node_modules', '.bin', 'copilot');
const COPILOT_HOME = mkdtempSync(join(tmpdir(), 'agentd-e2e-copilot-'));
let wbx;
let wb;
let page;

// The steps build on each other: once one fails, the rest fail at once
// (counted, not skipped) instead of each waiting out its timeouts.
let failed;
const test = (name, fn) =>
  nodeTest(name, async () => {
    if (failed) throw new Error(`not run: "${failed}" failed`);
    try {
      await fn();
    } catch (e) {
      failed = name;
      await wb?.shot(`failed-${name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => undefined);
      throw e;
    }
  });

const badgeSays = (re, timeoutMs = 20_000) => waitFor(`the badge to say ${re}`, async () => re.test(await wb.badgeText()), timeoutMs, 50);
/** Lists a step this run did twice, for make test's summary ($AGENTD_RETRY_LOG). */
function noteRetry(what) {
  console.log(`retried: ${what}`);
  if (process.env.AGENTD_RETRY_LOG) appendFileSync(process.env.AGENTD_RETRY_LOG, `vscode e2e: ${what}\n`);
}
const rowWith = (...words) => waitFor(`a Sessions row with ${words.join(', ')}`, async () => (await wb.treeRows()).find((r) => words.every((w) => r.includes(w))), 20_000);

/** Sends a file's text as the agent's task: task.md asks about `touch NOTES.md`, rm.md about `rm -rf build`, edit.md an edit of NOTES.md. */
async function sendTask(file = 'task.md') {
  const editor = await wb.openFile(file);
  await editor.click();
  await page.keyboard.press('Control+A');
  await wb.runCommand('agentd: Send Selection to Agent');
}

before(async () => {
  wbx = await startWorkbench({
    vsix: need('VSIX'),
    node24: need('CODE_SERVER_NODE'),
    entry: need('CODE_SERVER'),
    chromiumPath: need('CHROMIUM', '/usr/bin/chromium'),
    artifacts: need('ARTIFACTS'),
    files: { 'task.md': 'Add a NOTES.md file', 'rm.md': 'please run rm -rf build', 'edit.md': 'edit NOTES.md' },
    agentd: AGENTD,
    // agentd.path is machine-scoped: a remote VS Code such as code-server reads it from the Machine settings.
    machineSettings: { 'agentd.path': AGENTD },
    userSettings: {
      'agentd.cooldown': '1s',
      'agentd.trace.server': 'messages',
      'agentd.agents.custom': [{ name: 'Demo agent', command: [AGENTD, 'demo-agent'] }],
      // A HOME of its own: no login of the machine's user is found.
      'agentd.agents.acp': [{ name: 'Copilot (ACP)', command: [COPILOT, '--acp'], env: { HOME: COPILOT_HOME, COPILOT_AUTO_UPDATE: 'false' } }],
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'chat.disableAIFeatures': true,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'extensions.ignoreRecommendations': true,
      'update.mode': 'none',
      'remote.autoForwardPorts': false,
      'terminal.integrated.gpuAcceleration': 'off',
      'window.restoreWindows': 'none',
    },
  });
  ({ page, workbench: wb } = wbx);
});

after(async () => {
  if (wb) await wb.shot('zz-last').catch(() => undefined);
  await wbx?.stop();
});

test('the badge appears once agentd runs', async () => {
  await badgeSays(/agentd/, 60_000);
});

test('New Agent Session starts the demo agent in a terminal and lists it in the Sessions view', async () => {
  await wb.growPanel();
  await wb.runCommand('agentd: New Agent Session');
  const items = await wb.quickItems('Demo agent');
  for (const a of ['Claude Code', 'Codex', 'Gemini CLI', 'OpenCode', 'Shell', 'Demo agent', 'Custom command']) {
    assert.ok(items.some((i) => i.includes(a)), `the picker offers ${a}: ${items.join(' | ')}`);
  }
  await wb.pickQuickItem('Demo agent');
  await waitFor('the demo agent in the terminal', async () => (await wb.terminalText()).includes('Welcome to the agentd demo agent'));
  await wb.runCommand('agentd: Focus on Sessions View');
  await rowWith('Demo agent', 'idle');
  await badgeSays(/^\S*\s*1 idle$/);
  await wb.shot('01-new-session');
});

test('Send Selection to Agent starts a turn; when the agent turns blocked the badge says so in warning colours', async () => {
  await sendTask();
  await badgeSays(/1 working/, 10_000);
  await badgeSays(/1 blocked/, 20_000);
  const bg = await wb.badge().evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.notEqual(bg, 'rgba(0, 0, 0, 0)', 'a warning background while blocked');
  await wb.shotBadge('02-badge-blocked');
  await rowWith('Demo agent', 'blocked');
  await rowWith('Do you want to proceed?');
});

test('a notification shows the question, what it approves and the option buttons', async () => {
  const toast = await wb.notification('Do you want to proceed?');
  assert.match((await toast.textContent()) ?? '', /Demo agent needs you: Do you want to proceed\? — command: touch NOTES\.md/);
  const buttons = (await toast.locator('.monaco-button').allTextContents()).map((t) => t.trim()).filter(Boolean);
  // Long labels are cut on the buttons; the QuickPick shows them whole.
  assert.deepEqual(buttons, ['Yes', "Yes, and don't ask…", 'No, and tell the…']);
  await wb.shot('03-blocked-notification');
  await wb.shot('04-sessions-view-blocked', wb.sessionsView());
});

test('clicking the badge opens the QuickPick of every option; picking Yes answers and the agent goes on', async () => {
  await wb.badge().click();
  await wb.quickInput().locator('.quick-input-title', { hasText: 'Demo agent: Do you want to proceed? — command: touch NOTES.md' }).waitFor({ state: 'visible' });
  const options = await wb.quickItems('Yes');
  assert.equal(options.length, 3, `three options: ${options.join(' | ')}`);
  await wb.shot('05-answer-quickpick');
  await wb.pickQuickItem('Yes');
  await badgeSays(/1 (working|done)/, 20_000);
  await badgeSays(/1 done/, 20_000);
  // Focus goes back to the badge (and shows its hover); a person would click on into the editor.
  await page.locator('.editor-instance .monaco-editor').first().click();
});

test('the badge, the Sessions view and the terminal show the finished turn', async () => {
  const bg = await wb.badge().evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.equal(bg, 'rgba(0, 0, 0, 0)', 'no warning background once nothing is blocked');
  await rowWith('Demo agent', 'done');
  assert.ok(!(await wb.treeRows()).some((r) => r.includes('Do you want to proceed?')), 'the question row is gone');
  await wb.shotBadge('06-badge-done');
  await wb.shot('07-sessions-view-done', wb.sessionsView());
  await waitFor('the finished turn in the terminal', async () => /Added NOTES\.md/.test(await wb.terminalText()));
  await wb.shot('08-terminal-done');
});

test('opening the terminal marks the finished turn seen: done becomes idle', async () => {
  await wb.runCommand('agentd: Open Terminal');
  await badgeSays(/1 idle/, 10_000);
  await rowWith('Demo agent', 'idle');
});

test('a second prompt is answered with the notification button', async () => {
  await wb.clearNotifications();
  await sendTask();
  await badgeSays(/1 blocked/, 20_000);
  const toast = await wb.notification('Do you want to proceed?');
  await toast.locator('.monaco-button', { hasText: /^Yes$/ }).click();
  await badgeSays(/1 (working|done)/, 20_000);
  await badgeSays(/1 (done|idle)/, 20_000);
});

test('an answer to a prompt that has gone is reported, not dropped', async () => {
  await wb.clearNotifications();
  await sendTask();
  await badgeSays(/1 blocked/, 20_000);
  await wb.runCommand('agentd: Answer Prompt');
  await wb.quickInput().locator('.quick-input-title', { hasText: 'Do you want to proceed?' }).waitFor({ state: 'visible' });
  // The person answers in the terminal while the QuickPick is still open…
  await page.locator('.terminal-wrapper.active .xterm').first().click();
  await page.keyboard.type('1');
  await badgeSays(/1 (working|done|idle)/, 20_000);
  // …then picks in the QuickPick (ignoreFocusOut keeps it open): agentd answers -32021.
  await wb.pickQuickItem('Yes');
  const toast = await wb.notification('not typed');
  assert.match((await toast.textContent()) ?? '', /"Yes" not typed: Demo agent's prompt is gone/);
  await wb.shot('09-stale-answer');
  await wb.clearNotifications();
  await badgeSays(/1 (done|idle)/, 20_000);
});

test('a task that names a command: the notification and the Sessions view show that command', async () => {
  await sendTask('rm.md');
  await badgeSays(/1 blocked/, 20_000);
  const toast = await wb.notification('rm -rf build');
  assert.match((await toast.textContent()) ?? '', /Demo agent needs you: Do you want to proceed\? — command: rm -rf build/);
  await wb.runCommand('agentd: Focus on Sessions View');
  await rowWith('command: rm -rf build');
  await waitFor('the command in the terminal', async () => (await wb.terminalText()).includes('rm -rf build'));
  await wb.shot('09b-command-notification');
  await toast.locator('.monaco-button', { hasText: /^Yes$/ }).click();
  await badgeSays(/1 (working|done)/, 20_000);
  await badgeSays(/1 (done|idle)/, 20_000);
  await wb.clearNotifications();
});

test('an edit: the notification names the file, and "Show Diff" opens the change in a diff editor', async () => {
  await sendTask('edit.md');
  await badgeSays(/1 blocked/, 20_000);
  const toast = await wb.notification('edit: NOTES.md');
  assert.match((await toast.textContent()) ?? '', /Demo agent needs you: Do you want to proceed\? — edit: NOTES\.md/);
  const buttons = (await toast.locator('.monaco-button').allTextContents()).map((t) => t.trim()).filter(Boolean);
  // Four buttons share the row: the long labels are cut shorter, so that none is squeezed to "Y…".
  assert.deepEqual(buttons, ['Yes', "Yes, and don't…", 'No, and tell…', 'Show Diff']);
  await rowWith('edit: NOTES.md');
  await wb.shot('09c-edit-notification');
  await toast.locator('.monaco-button', { hasText: 'Show Diff' }).click();
  const diff = page.locator('.editor-instance .monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible' });
  const tab = page.locator('.tabs-container .tab.active');
  assert.match((await tab.textContent()) ?? '', /NOTES\.md: what Demo agent asks to change/);
  await waitFor('both sides of the change in the diff editor', async () => {
    const text = await diff.locator('.view-lines').allTextContents();
    const all = text.join('\n').replace(/\u00a0/g, ' ');
    return all.includes('TODO: write these notes') && all.includes('Notes kept by the demo agent.');
  });
  // The notice closed with the click, and is back while the prompt waits.
  await wb.notification('edit: NOTES.md');
  await wb.shot('09d-show-diff');
  // The QuickPick says what it approves, and has the diff as a title button.
  await wb.badge().click();
  await wb.quickInput().locator('.quick-input-title', { hasText: 'Demo agent: Do you want to proceed? — edit: NOTES.md' }).waitFor({ state: 'visible' });
  await wb.quickInput().locator('.quick-input-titlebar [aria-label="Show Diff"]').first().waitFor({ state: 'visible' });
  await wb.quickItems('Yes');
  await wb.shot('09e-answer-quickpick-edit');
  await wb.pickQuickItem('Yes');
  await badgeSays(/1 (working|done)/, 20_000);
  await badgeSays(/1 (done|idle)/, 20_000);
  await waitFor('the edit reported in the terminal', async () => /Edited NOTES\.md/.test(await wb.terminalText()));
  await wb.runCommand('View: Close All Editors');
  await wb.clearNotifications();
});

test("Kill Session from the row's context menu ends the agent; the row says exited and the badge drops it", async () => {
  await wb.runCommand('agentd: Focus on Sessions View');
  // The turn's end first: the row is drawn again when its state changes.
  await rowWith('Demo agent', 'done');
  const row = wb.sessionsView().locator('.monaco-list-row[role="treeitem"]', { hasText: 'Demo agent' }).first();
  const kill = async () => {
    await row.click({ button: 'right' });
    const menu = page.locator('.monaco-menu .action-item', { hasText: 'Kill Session' }).first();
    await menu.waitFor({ state: 'visible' });
    await wb.shot('10-context-menu');
    await menu.click();
  };
  await kill();
  try {
    await waitFor('a Sessions row with Demo agent, exited, after the first click', async () => (await wb.treeRows()).find((r) => r.includes('Demo agent') && r.includes('exited')), 8_000);
  } catch {
    // The menu went with a redraw of the view before the click reached it
    // (a fresh-clone run beside a busy loop sent no session/kill): a person
    // opens it again. Listed, as every retry is.
    noteRetry("Kill Session's context menu opened again (the first click sent no session/kill)");
    await kill();
  }
  await rowWith('Demo agent', 'exited');
  await badgeSays(/^\S*\s*agentd$/, 10_000);
  await waitFor('the terminal to say so', async () => /Demo agent was ended by SIGHUP/.test(await wb.terminalText()));
  await wb.shot('11-exited');
});

/** The pids of processes whose command line starts with prefix. */
function pidsOf(prefix) {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().match(/^(\d+) (.*)$/))
    .filter((m) => m && m[2].startsWith(prefix))
    .map((m) => Number(m[1]));
}

test('Reload Window keeps the session: its row comes back blocked, its terminal reopens on the current screen, and answering works', async () => {
  await wb.clearNotifications();
  await wb.runCommand('agentd: New Agent Session');
  await wb.pickQuickItem('Demo agent');
  await waitFor('the new demo agent in the terminal', async () => (await wb.terminalText()).includes('Welcome to the agentd demo agent'));
  await badgeSays(/1 idle/, 15_000);
  await sendTask();
  await badgeSays(/1 blocked/, 20_000);
  await rowWith('Demo agent 2', 'blocked');
  await waitFor('the prompt in the terminal', async () => (await wb.terminalText()).includes('Do you want to proceed?'));
  await wb.clearNotifications();
  await wb.shot('12-before-reload');
  const daemons = pidsOf(`${AGENTD} serve --socket ${wbx.socket}`);
  assert.equal(daemons.length, 1, `one daemon serves this VS Code: ${daemons}`);

  await wb.reloadWindow();
  await badgeSays(/1 blocked/, 60_000);
  await wb.runCommand('agentd: Focus on Sessions View');
  await rowWith('Demo agent 2', 'blocked');
  await rowWith('Do you want to proceed?');
  await waitFor('the terminal reopened on the current screen', async () => (await wb.terminalText()).includes('Do you want to proceed?'), 20_000);
  assert.deepEqual(pidsOf(`${AGENTD} serve --socket ${wbx.socket}`), daemons, 'the same daemon, untouched by the reload');
  await wb.shot('13-after-reload');

  await wb.badge().click();
  await wb.quickInput().locator('.quick-input-title', { hasText: 'Demo agent 2: Do you want to proceed?' }).waitFor({ state: 'visible' });
  await wb.pickQuickItem('Yes');
  await badgeSays(/1 (working|done)/, 20_000);
  await badgeSays(/1 done/, 20_000);
  await waitFor('the finished turn in the reopened terminal', async () => /Added NOTES\.md/.test(await wb.terminalText()));
  await page.locator('.editor-instance .monaco-editor').first().click();
  await wb.shot('14-answered-after-reload');
});

test('killing the forwarder ends nothing: the window connects again and the session runs on', async () => {
  await wb.clearNotifications();
  const fwd = pidsOf(`${AGENTD} --stdio --verbose --cooldown 1s`);
  assert.equal(fwd.length, 1, `one forwarder of ours runs: ${fwd}`);
  process.kill(fwd[0], 'SIGKILL');
  await waitFor('a new forwarder', async () => {
    const now = pidsOf(`${AGENTD} --stdio --verbose --cooldown 1s`);
    return now.length === 1 && now[0] !== fwd[0];
  }, 20_000);
  await badgeSays(/1 (done|idle)/, 20_000);
  await rowWith('Demo agent 2', 'done');
  assert.ok(!(await wb.treeRows()).some((r) => r.includes('Demo agent 2') && r.includes('exited')), 'the session was not taken for ended');
});

test('agentd upgrade hands the session to new code in the same daemon process; the window connects again without a reload', async () => {
  await wb.clearNotifications();
  const daemons = pidsOf(`${AGENTD} serve --socket ${wbx.socket}`);
  const fwd = pidsOf(`${AGENTD} --stdio --verbose --cooldown 1s`);
  assert.equal(daemons.length, 1, `one daemon: ${daemons}`);
  // The same build: the Go end-to-end test upgrades between two versions;
  // here it is the window's side that is tried.
  const out = execFileSync(AGENTD, ['upgrade'], { env: { ...process.env, AGENTD_SOCKET: wbx.socket }, encoding: 'utf8' });
  assert.match(out, /upgraded from (\S+) to \1 in \d+ ms \(its sessions paused for \d+ ms\); its \d+ session\(s\) run on/);
  assert.match(out, /warning: the daemon ran this very version already/, 'the same version again is said, not hidden');
  await waitFor('a new forwarder', async () => {
    const now = pidsOf(`${AGENTD} --stdio --verbose --cooldown 1s`);
    return now.length === 1 && now[0] !== fwd[0];
  }, 20_000);
  assert.deepEqual(pidsOf(`${AGENTD} serve --socket ${wbx.socket}`), daemons, 'the same daemon process');
  await badgeSays(/1 (done|idle)/, 20_000);
  await rowWith('Demo agent 2', 'done');
  assert.ok(!(await wb.treeRows()).some((r) => r.includes('Demo agent 2') && r.includes('exited')), 'the session was not taken for ended');
  const toasts = await page.locator('.notification-toast').allTextContents();
  assert.ok(!toasts.some((t) => /daemon stopped/.test(t)), `no "daemon stopped" notice: ${toasts}`);
  await wb.shot('14b-after-upgrade');
});

test("killing the daemon: its keeper ends the agent, and the window says which session ended", async () => {
  await wb.clearNotifications();
  const daemons = pidsOf(`${AGENTD} serve --socket ${wbx.socket}`);
  assert.equal(daemons.length, 1, `one daemon: ${daemons}`);
  process.kill(daemons[0], 'SIGKILL');
  const toast = await wb.notification("agentd's daemon stopped");
  assert.match((await toast.textContent()) ?? '', /agentd's daemon stopped; this session ended with it: Demo agent 2 \(s2\)\./);
  await wb.shot('15-daemon-killed');
  await badgeSays(/^\S*\s*agentd$/, 20_000);
  await waitFor('the rows of the dead daemon to go', async () => (await wb.treeRows()).length === 0, 10_000);
  // A new daemon serves: a new session starts.
  await wb.runCommand('agentd: New Agent Session');
  await wb.pickQuickItem('Demo agent');
  await badgeSays(/1 idle/, 15_000);
});

const copilotMissing = !existsSync(COPILOT) && !process.env.AGENTD_REQUIRE_AGENTS;
nodeTest(
  'an ACP agent that needs a login: the notification offers its method, and the login runs in a terminal',
  { skip: copilotMissing && `Copilot CLI is not installed at ${COPILOT} (make agents installs it)` },
  async () => {
    if (failed) throw new Error(`not run: "${failed}" failed`);
    assert.ok(existsSync(COPILOT), `Copilot CLI is installed at ${COPILOT} (make agents)`);
    await wb.clearNotifications();
    await wb.runCommand('agentd: New Agent Session');
    await wb.pickQuickItem('Copilot (ACP)');
    // The real Copilot CLI starts, initializes ACP and answers session/new
    // before agentd knows it needs a login: on a loaded 2-core machine
    // that took longer than the 20 s other notifications get.
    const toast = await wb.notification('needs you to log in', 90_000);
    assert.match((await toast.textContent()) ?? '', /Copilot needs you to log in: Authentication required/);
    const buttons = (await toast.locator('.monaco-button').allTextContents()).map((t) => t.trim()).filter(Boolean);
    assert.deepEqual(buttons, ['Log in with Copilot CLI']);
    await wb.shot('16-acp-login-notification');
    await toast.locator('.monaco-button', { hasText: 'Log in with Copilot CLI' }).click();
    // agentd runs the login Copilot named ("copilot login"), in a terminal
    // of its own; offline it waits for a browser that never comes.
    await waitFor('copilot login in the terminal', async () => /Waiting for authorization/.test(await wb.terminalText()), 60_000);
    await rowWith('Copilot Login');
    await rowWith('GitHub Copilot CLI', 'error');
    // copilot login opens the authorization page through the editor's own
    // browser opener (the login's environment is the window's, and
    // code-server asks first): a person would authorize there. Offline
    // nobody can, so the dialog is shown and closed.
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'open the external website' });
    await dialog.waitFor({ state: 'visible', timeout: 30_000 });
    assert.match((await dialog.textContent()) ?? '', /github\.com\/login\/oauth\/authorize/);
    await wb.shot('17-acp-login-opens-browser');
    await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    await wb.shot('18-acp-login-terminal');
  },
);
