// The one-step install (issue 28), in a real VS Code (code-server) whose
// PATH has no agentd: the .vsix for this platform (as make dist writes it,
// with agentd inside) is installed, and nothing else. The extension runs
// its bundled agentd; Show Version says so; the demo agent is started from
// the extension, shows in the Sessions view, and its prompt is answered.
// Then the universal .vsix (no agentd inside) with nothing on PATH says
// "agentd was not found" once and offers the setting. Screenshots go to
// $ARTIFACTS as install-*.png.
//
// Needs VSIX_PLATFORM and VSIX_UNIVERSAL (agentd-dist's .vsix files),
// DIST_VERSION (the version agentd-dist stamped), CODE_SERVER,
// CODE_SERVER_NODE, ARTIFACTS, CHROMIUM.
import { test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

import { need, startWorkbench, waitFor } from './workbench.mjs';

/** PATH without any folder that has an agentd in it. */
function pathWithoutAgentd() {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => {
      if (!d) return false;
      try {
        if (!statSync(join(d, 'agentd')).isFile()) return true;
        accessSync(join(d, 'agentd'), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(delimiter);
}
const PATH = pathWithoutAgentd();

const baseSettings = {
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
};

function workbench(vsix, extra = {}) {
  return startWorkbench({
    vsix,
    node24: need('CODE_SERVER_NODE'),
    entry: need('CODE_SERVER'),
    chromiumPath: need('CHROMIUM', '/usr/bin/chromium'),
    artifacts: need('ARTIFACTS'),
    PATH,
    ...extra,
  });
}

/** The pids and command lines of processes whose command line starts with prefix. */
function processes(prefix) {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().match(/^(\d+) (.*)$/))
    .filter((m) => m && m[2].startsWith(prefix))
    .map((m) => m[2]);
}

async function expandedToast(wb, text, timeout) {
  const toast = await wb.notification(text, timeout);
  const expand = toast.locator('.codicon-notifications-expand');
  if (await expand.count()) await expand.first().click().catch(() => undefined);
  const body = (await toast.locator('.notification-list-item-message').innerText()).replace(/\s+/g, ' ');
  const buttons = (await toast.locator('.monaco-button').allTextContents()).map((t) => t.trim()).filter(Boolean);
  return { toast, body, buttons };
}

nodeTest('the machine the tests run on: no agentd on the PATH the VS Code gets', () => {
  const r = spawnSync('sh', ['-c', 'command -v agentd'], { env: { ...process.env, PATH }, encoding: 'utf8' });
  assert.notEqual(r.status, 0, `agentd is on PATH: ${r.stdout}`);
});

nodeTest('the .vsix for this platform alone: its agentd runs, Show Version says which, the demo agent starts, shows in Sessions, and its prompt is answered', async () => {
  const version = need('DIST_VERSION');
  const wbx = await workbench(need('VSIX_PLATFORM'), {
    agentd: 'bundled',
    files: { 'task.md': 'Add a NOTES.md file' },
    // The demo agent is agentd's own (agentd demo-agent): the bundled binary runs it.
    userSettings: ({ bundled }) => ({ ...baseSettings, 'agentd.cooldown': '1s', 'agentd.agents.custom': [{ name: 'Demo agent', command: [bundled, 'demo-agent'] }] }),
  });
  const { workbench: wb, page, bundled, extDir } = wbx;
  const rowWith = (...words) => waitFor(`a Sessions row with ${words.join(', ')}`, async () => (await wb.treeRows()).find((r) => words.every((w) => r.includes(w))), 20_000);
  const badgeSays = (re, ms = 20_000) => waitFor(`the badge to say ${re}`, async () => re.test(await wb.badgeText()), ms, 50);
  try {
    assert.ok(bundled && bundled.startsWith(extDir), `the .vsix has bin/agentd: ${bundled}`);
    await badgeSays(/agentd/, 60_000);
    // The forwarder the extension started is the bundled binary.
    const fwd = processes(`${bundled} --stdio`);
    assert.equal(fwd.length, 1, `one forwarder from the bundled agentd: ${JSON.stringify(fwd)}`);

    await wb.runCommand('agentd: Show Version');
    const { body, buttons } = await expandedToast(wb, 'bundled with the extension');
    await wb.shot('install-1-show-version');
    assert.match(body, new RegExp(`^agentd ${bundled.replace(/[.+]/g, '\\$&')} \\(bundled with the extension\\), version ${version.replace(/[.+]/g, '\\$&')} \\(commit \\w+, protocol 1, linux/`));
    assert.match(body, new RegExp(`its daemon: version ${version.replace(/[.+]/g, '\\$&')} \\(pid \\d+, protocol 1, the same build\\)`));
    assert.deepEqual(buttons, ['Show Log']);
    await wb.clearNotifications();

    await wb.growPanel();
    await wb.runCommand('agentd: New Agent Session');
    await wb.pickQuickItem('Demo agent');
    await waitFor('the demo agent in the terminal', async () => (await wb.terminalText()).includes('Welcome to the agentd demo agent'));
    await wb.runCommand('agentd: Focus on Sessions View');
    await rowWith('Demo agent', 'idle');
    await wb.shot('install-2-demo-agent-in-sessions');

    const editor = await wb.openFile('task.md');
    await editor.click();
    await page.keyboard.press('Control+A');
    await wb.runCommand('agentd: Send Selection to Agent');
    await badgeSays(/1 blocked/, 30_000);
    await rowWith('Demo agent', 'blocked');
    await rowWith('Do you want to proceed?');
    await wb.notification('Do you want to proceed?');
    await wb.shot('install-3-blocked');

    await wb.badge().click();
    await wb.quickInput().locator('.quick-input-title', { hasText: 'Demo agent: Do you want to proceed?' }).waitFor({ state: 'visible' });
    await wb.pickQuickItem('Yes');
    await badgeSays(/1 (working|done)/, 20_000);
    await badgeSays(/1 done/, 20_000);
    await waitFor('the finished turn in the terminal', async () => /Added NOTES\.md/.test(await wb.terminalText()));
    await page.locator('.editor-instance .monaco-editor').first().click();
    await rowWith('Demo agent', 'done');
    await wb.shot('install-4-answered-done');
  } catch (e) {
    await wb.shot('install-failed').catch(() => undefined);
    throw e;
  } finally {
    await wbx.stop();
  }
});

nodeTest('the universal .vsix with nothing on PATH: one "agentd not found" notification, and Open Settings opens agentd.path', async () => {
  const wbx = await workbench(need('VSIX_UNIVERSAL'), { userSettings: baseSettings });
  const { workbench: wb, page, bundled } = wbx;
  try {
    assert.equal(bundled, undefined, 'the universal .vsix has no agentd');
    const { toast, body, buttons } = await expandedToast(wb, 'agentd was not found', 60_000);
    await wb.shot('install-5-universal-not-found');
    assert.match(body, /^agentd was not found: agentd\.path is not set, this extension has no agentd of its own \(.*\/bin\/agentd: it is the universal \.vsix\), and there is no agentd on PATH\. Install the extension's \.vsix for your platform \(it has agentd inside\), or install agentd and set agentd\.path to it\./);
    assert.deepEqual(buttons, ['Open Settings', 'Show Log']);
    // Said once, not retried.
    await page.waitForTimeout(4000);
    assert.equal(await page.locator('.notification-toast', { hasText: 'agentd' }).count(), 1);
    await toast.locator('.monaco-button', { hasText: 'Open Settings' }).click();
    // agentd.path is machine-scoped: code-server, a remote window, lists it under its Remote tab.
    await page.locator('.settings-editor .settings-tabs-widget .action-label', { hasText: 'Remote' }).first().click();
    const setting = page.locator('.settings-editor .setting-item-contents', { hasText: 'Path of the' }).first();
    await setting.waitFor({ state: 'visible', timeout: 20_000 });
    await wb.shot('install-6-open-settings');
  } catch (e) {
    await wb.shot('install-failed-universal').catch(() => undefined);
    throw e;
  } finally {
    await wbx.stop();
  }
});
