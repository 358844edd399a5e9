// A real VS Code for the end-to-end test: code-server (on Node 24) with the
// extension installed from its .vsix, bound to 127.0.0.1, driven by Debian's
// Chromium through playwright-core; plus the helpers a test uses to act as a
// person would (command palette, quick picks, status bar, views, terminal).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export function need(name, dflt) {
  const v = process.env[name] ?? dflt;
  if (!v) throw new Error(`${name} is not set (editors/vscode/ci.sh sets it)`);
  return v;
}

// Copilot 1.0.102's "copilot login" uses a device code instead of a browser
// when any of these is set (CI=false too).
const COPILOT_DEVICE_MARKERS = ['CI', 'BUILD_NUMBER', 'RUN_ID', 'CODESPACES', 'SSH_CONNECTION', 'SSH_CLIENT', 'SSH_TTY'];

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

export async function waitFor(what, fn, timeoutMs = 30_000, everyMs = 150) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Starts code-server with the .vsix installed and a browser on it.
 * `userSettings` go to User/settings.json, `machineSettings` to
 * Machine/settings.json (where a remote VS Code reads machine-scoped ones);
 * either may be a function of `{ bundled }`, the path of the agentd the
 * installed .vsix carries (undefined when it has none). `PATH` replaces the
 * PATH code-server (and so the extension) runs with. `agentd` is the binary
 * that stops the test's daemon at the end; 'bundled': the .vsix's own.
 */
export async function startWorkbench({ vsix, node24, entry, chromiumPath, artifacts, userSettings, machineSettings, files, agentd, PATH, configToml, env: moreEnv }) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-vscode-e2e-'));
  const dataDir = path.join(tmp, 'data');
  const extDir = path.join(tmp, 'extensions');
  const folder = path.join(tmp, 'project');
  const xdg = path.join(tmp, 'xdg');
  for (const d of [path.join(dataDir, 'User'), path.join(dataDir, 'Machine'), extDir, folder, xdg]) fs.mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(files ?? {})) fs.writeFileSync(path.join(folder, name), text);
  // agentd's daemon for this VS Code lives in a folder of the test's own
  // (never the person's), and is stopped with its sessions at the end.
  const socket = path.join(tmp, 'run', 'agentd.sock');
  // The window runs as on a person's desktop, not as on the CI runner that
  // runs this test: without the variables that make Copilot's login use a
  // device code, which offline fails at once, instead of opening a browser
  // (cmd/agentd/acplogin_test.go's copilotDeviceMarkers, the same list).
  const desktop = Object.fromEntries(Object.entries(process.env).filter(([k]) => !COPILOT_DEVICE_MARKERS.includes(k)));
  const env = {
    ...desktop,
    XDG_CONFIG_HOME: path.join(xdg, 'config'),
    XDG_STATE_HOME: path.join(xdg, 'state'),
    XDG_DATA_HOME: path.join(xdg, 'data'),
    XDG_CACHE_HOME: path.join(xdg, 'cache'),
    AGENTD_SOCKET: socket,
    ...(PATH !== undefined && { PATH }),
    ...moreEnv,
  };
  // agentd's config.toml ([[hosts]], say), as the window's agentd reads it.
  if (configToml !== undefined) {
    fs.mkdirSync(path.join(env.XDG_CONFIG_HOME, 'agentd'), { recursive: true });
    fs.writeFileSync(path.join(env.XDG_CONFIG_HOME, 'agentd', 'config.toml'), configToml);
  }
  const inst = spawnSync(node24, [entry, '--user-data-dir', dataDir, '--extensions-dir', extDir, '--install-extension', vsix], { env, encoding: 'utf8', timeout: 120_000 });
  if (inst.status !== 0) throw new Error(`installing ${vsix} failed (${inst.status}):\n${inst.stdout}\n${inst.stderr}`);
  const bundled = fs
    .readdirSync(extDir)
    .map((d) => path.join(extDir, d, 'bin', 'agentd'))
    .find((p) => fs.existsSync(p));
  if (agentd === 'bundled') agentd = bundled;
  const settings = (s) => JSON.stringify((typeof s === 'function' ? s({ bundled }) : s) ?? {}, null, 2);
  fs.writeFileSync(path.join(dataDir, 'User', 'settings.json'), settings(userSettings));
  fs.writeFileSync(path.join(dataDir, 'Machine', 'settings.json'), settings(machineSettings));

  const port = await freePort();
  const log = fs.createWriteStream(path.join(artifacts, 'code-server.log'));
  const server = spawn(
    node24,
    [entry, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', '--user-data-dir', dataDir, '--extensions-dir', extDir, folder],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  server.stdout.pipe(log);
  server.stderr.pipe(log);
  // ci.sh kills this process group on its way out, should the test itself be killed.
  if (process.env.E2E_PIDFILE) fs.writeFileSync(process.env.E2E_PIDFILE, String(server.pid));
  let browser;
  const stop = async () => {
    await browser?.close().catch(() => undefined);
    if (agentd) spawnSync(agentd, ['stop', '--force'], { env, timeout: 20_000 });
    if (server.exitCode === null && server.signalCode === null) {
      const gone = new Promise((r) => server.once('exit', r));
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {}
      await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
      try {
        process.kill(-server.pid, 'SIGKILL');
      } catch {}
    }
    log.end();
    if (process.env.E2E_PIDFILE) fs.rmSync(process.env.E2E_PIDFILE, { force: true });
    // VS Code's logs, the extension's output channel among them, are kept for a look after a failure.
    try {
      fs.cpSync(path.join(dataDir, 'logs'), path.join(artifacts, 'vscode-logs'), { recursive: true });
    } catch {}
    // So is the daemon's own log.
    try {
      fs.cpSync(path.join(xdg, 'state', 'agentd', 'agentd.log'), path.join(artifacts, 'agentd-daemon.log'));
    } catch {}
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  try {
    await waitFor('code-server to listen', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000, 300);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    return { page, folder, server, stop, socket, env, bundled, extDir, workbench: new Workbench(page, artifacts) };
  } catch (e) {
    await stop();
    throw e;
  }
}

export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
  }

  /** The extension's status bar item (agentd's badge). */
  badge() {
    // VS Code gives an extension's item the id `<extension id>.<item id>`.
    return this.page.locator('[id="agentd.agentd.badge"]');
  }

  async badgeText() {
    return ((await this.badge().textContent({ timeout: 2000 })) ?? '').trim();
  }

  /** Moves the mouse off any hover and lets animations (toasts fading in) finish. */
  async settle() {
    await this.page.mouse.move(760, 140);
    await this.page.waitForTimeout(600);
  }

  async shot(name, locator) {
    await this.settle();
    const file = path.join(this.artifacts, `${name}.png`);
    await (locator ?? this.page).screenshot({ path: file });
    return file;
  }

  /** A picture of the badge with a little of the status bar around it. */
  async shotBadge(name) {
    await this.settle();
    const box = await this.badge().boundingBox();
    const vp = this.page.viewportSize();
    const x = Math.max(0, box.x - 60);
    const y = Math.max(0, box.y - 40);
    await this.page.screenshot({
      path: path.join(this.artifacts, `${name}.png`),
      clip: { x, y, width: Math.min(vp.width - x, box.width + 360), height: Math.min(vp.height - y, box.height + 40) },
    });
  }

  async clearNotifications() {
    await this.runCommand('Notifications: Clear All Notifications');
  }

  quickInput() {
    return this.page.locator('.quick-input-widget');
  }

  async runCommand(title) {
    await this.page.keyboard.press('F1');
    const input = this.quickInput().locator('.quick-input-box input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    await this.quickInput().locator('.monaco-list-row', { hasText: title }).first().waitFor({ state: 'visible' });
    await input.press('Enter');
  }

  async pickQuickItem(label) {
    const row = this.quickInput().locator('.monaco-list-row', { hasText: label }).first();
    await row.waitFor({ state: 'visible' });
    await row.click();
  }

  /** The rows of the open quick input, once one of them shows `expect`. */
  async quickItems(expect) {
    await this.quickInput().locator('.monaco-list-row', { hasText: expect }).first().waitFor({ state: 'visible' });
    return this.quickInput().locator('.monaco-list-row').allTextContents();
  }

  /** The side bar showing agentd's Sessions view. */
  sessionsView() {
    return this.page.locator('#workbench\\.parts\\.sidebar');
  }

  /** The Sessions view's rows by their accessible labels, e.g. "Demo agent, idle for 4s". */
  async treeRows() {
    const rows = this.sessionsView().locator('.monaco-list-row[role="treeitem"]');
    return rows.evaluateAll((els) => els.map((e) => `${e.getAttribute('aria-label')} | ${e.textContent}`));
  }

  /** Reloads the window, as "Developer: Reload Window" does, and waits for the workbench. */
  async reloadWindow() {
    await this.runCommand('Developer: Reload Window');
    await this.page.waitForEvent('load', { timeout: 60_000 });
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  }

  async terminalText() {
    return (await this.page.locator('.terminal-wrapper.active .xterm-rows').allTextContents()).join('\n');
  }

  async notification(text, timeout = 20_000) {
    const toast = this.page.locator('.notification-toast', { hasText: text }).first();
    await toast.waitFor({ state: 'visible', timeout });
    return toast;
  }

  /**
   * Opens the panel and drags its top edge up to `toY`, so a terminal in it
   * has room for an agent's prompt (the demo agent draws for the size it
   * starts with, so this is done before a session starts).
   */
  async growPanel(toY = 200) {
    const panel = this.page.locator('[id="workbench.parts.panel"]');
    // The Problems view opens the panel without starting a shell in it.
    if (!(await panel.isVisible())) await this.page.keyboard.press('Control+Shift+M');
    await panel.waitFor({ state: 'visible' });
    const box = await panel.boundingBox();
    const x = box.x + box.width / 2;
    // The sash is the 4 px just above the panel.
    await this.page.mouse.move(x, box.y - 2);
    await this.page.mouse.down();
    await this.page.mouse.move(x, toY, { steps: 12 });
    await this.page.mouse.up();
    const after = await panel.boundingBox();
    if (after.y > toY + 40) throw new Error(`the panel did not grow: its top is at ${after.y}, wanted ${toY}`);
  }

  async openFile(name) {
    await this.page.keyboard.press('Control+P');
    const input = this.quickInput().locator('.quick-input-box input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    // Enter opens the row that is active: wait until it is this file's, not
    // a recently opened one still listed before the filter applies.
    await waitFor(`quick open to put ${name} first`, async () => ((await this.quickInput().locator('.monaco-list-row.focused').first().textContent({ timeout: 2000 })) ?? '').includes(name), 15_000, 100);
    await input.press('Enter');
    const editor = this.page.locator('.editor-instance .monaco-editor').first();
    await editor.waitFor({ state: 'visible' });
    return editor;
  }
}
