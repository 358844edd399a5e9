// When agentd.path points at something that does not start (it exits at
// once with a message, it does not exist, it carries --stdio), a real VS Code
// (code-server) says why in one notification, with the command line, the
// exit code and agentd's stderr, and a button that opens the log (issue 31).
// Screenshots go to $ARTIFACTS as startfail-*.png.
//
// Needs what e2e.test.mjs needs: AGENTD_BIN, VSIX, CODE_SERVER,
// CODE_SERVER_NODE, ARTIFACTS, CHROMIUM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { need, startWorkbench, waitFor } from './workbench.mjs';

const AGENTD = need('AGENTD_BIN');
const dir = mkdtempSync(join(tmpdir(), 'agentd-startfail-'));
const exits2 = join(dir, 'agentd-exits-2');
writeFileSync(exits2, '#!/bin/sh\necho "agentd: cannot read rules: /etc/agentd/rules/x.toml: line 3: bad key" >&2\nexit 2\n');
chmodSync(exits2, 0o755);

const settings = {
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
};

/** A VS Code with agentd.path set to path; fn(wb, page) looks at it. */
async function withPath(path, fn) {
  const wbx = await startWorkbench({
    vsix: need('VSIX'),
    node24: need('CODE_SERVER_NODE'),
    entry: need('CODE_SERVER'),
    chromiumPath: need('CHROMIUM', '/usr/bin/chromium'),
    artifacts: need('ARTIFACTS'),
    agentd: AGENTD,
    machineSettings: { 'agentd.path': path },
    userSettings: settings,
  });
  try {
    await fn(wbx.workbench, wbx.page);
  } finally {
    await wbx.stop();
  }
}

/** The one notification about agentd's start: its text and its buttons. */
async function startNotice(wb, text) {
  const toast = await wb.notification(text, 60_000);
  // Long messages are folded; expand the toast so the screenshot shows all of it.
  const expand = toast.locator('.codicon-notifications-expand');
  if (await expand.count()) await expand.first().click().catch(() => undefined);
  const body = (await toast.locator('.notification-list-item-message').innerText()).replace(/\s+/g, ' ');
  const buttons = (await toast.locator('.monaco-button').allTextContents()).map((t) => t.trim()).filter(Boolean);
  return { toast, body, buttons };
}

async function showLog(wb, page, toast, expect, shot) {
  await toast.locator('.monaco-button', { hasText: 'Show Log' }).click();
  // (The output is a Monaco editor: its spaces are no-break spaces.)
  const out = page.locator('[id="workbench.parts.panel"]');
  try {
    await waitFor(`the agentd output to show ${expect}`, async () => ((await out.innerText().catch(() => '')) ?? '').replace(/\u00a0/g, ' ').includes(expect), 20_000);
  } finally {
    await wb.shot(shot);
  }
}

test('agentd.path exiting 2 with a message: one notification with the command, the code and the message, and Show Log', async () => {
  await withPath(exits2, async (wb, page) => {
    const { toast, body, buttons } = await startNotice(wb, 'agentd did not start');
    await wb.shot('startfail-1-exits-2');
    assert.match(body, /agentd did not start: it exited with code 2 before it answered initialize/);
    assert.match(body, new RegExp(`Command: ${exits2} --stdio --verbose`));
    assert.deepEqual(buttons, ['Show Log', 'Open Settings', 'Retry']);
    assert.match(body, /cannot read rules: \/etc\/agentd\/rules\/x\.toml: line 3: bad key/);
    // Not retried in a loop: it is said once.
    await page.waitForTimeout(4000);
    assert.equal(await page.locator('.notification-toast', { hasText: 'agentd' }).count(), 1);
    await showLog(wb, page, toast, 'cannot read rules', 'startfail-2-exits-2-log');
  });
});

test('agentd.path that does not exist: says so, with Open Settings and Show Log', async () => {
  await withPath(join(dir, 'no-such-agentd'), async (wb) => {
    const { body, buttons } = await startNotice(wb, 'was not found');
    await wb.shot('startfail-3-not-found');
    assert.match(body, new RegExp(`agentd was not found at "${join(dir, 'no-such-agentd')}"`));
    assert.ok(buttons.includes('Open Settings') && buttons.includes('Show Log'), `buttons: ${buttons.join(', ')}`);
  });
});

test('agentd.path with --stdio: it runs without the duplicate, and a notification shows the right form', async () => {
  await withPath(`${AGENTD} --stdio`, async (wb) => {
    const { body, buttons } = await startNotice(wb, 'has --stdio');
    await waitFor('the badge', async () => /agentd/.test(await wb.badgeText()), 30_000);
    await wb.shot('startfail-4-path-with-stdio');
    assert.equal(body, `agentd.path "${AGENTD} --stdio" has --stdio, which the extension adds itself: set it to "${AGENTD}" (it runs that way now).`);
    assert.deepEqual(buttons, ['Open Settings']);
    assert.doesNotMatch(await wb.badgeText(), /failed|restarting/);
  });
});
