// The page across hosts (agentd web --hosts) in Debian's Chromium at
// 390×844: this machine and two others reached over real ssh, whose demo
// sessions have the same id, the same name and the same prompt.
// browser_hosts_test.go starts them, blocks a's and b's demo on
// "touch NOTES.md", runs `agentd web --hosts` and this script with:
//   LINK       the link agentd web printed
//   CHROMIUM   the browser (default /usr/bin/chromium)
//   ARTIFACTS  where screenshots go
//   ID         the demo sessions' id (the same on every host)
// To take host b off the network and back it prints "# host b down" or
// "# host b up" and waits for a line on its stdin once that is done.
// Each step prints "ok N - what" or "not ok N - what: why"; the last line is
// "# pass N" / "# fail N", and the exit code is non-zero on any failure.
import { chromium } from 'playwright-core';
import path from 'node:path';
import readline from 'node:readline';

import { finish, need, setupFailed, step } from './tap.mjs';

const LINK = need('LINK');
const ARTIFACTS = need('ARTIFACTS');
const ID = need('ID');
const WAIT = 60_000;

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function ask(what) {
  console.log('# ' + what);
  const { done } = await lines.next();
  if (done) throw new Error('the test ended before: ' + what);
}

const shot = async (page, name) => page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: false });
const group = (page, host) => page.locator(`.group[data-host="${host}"]`);
const card = (page, host) => page.locator(`.card[data-host="${host}"][data-session="${ID}"]`);

const browser = await chromium.launch({
  executablePath: need('CHROMIUM', '/usr/bin/chromium'),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const errors = [];

try {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 });
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));

  await step('the printed link signs in', async () => {
    await page.goto(LINK);
    await page.waitForURL((u) => u.pathname === '/' && !u.search.includes('code'));
  });

  await step('the sessions are grouped under their hosts, each host up, a and b blocked on what they approve', async () => {
    for (const h of ['local', 'a', 'b']) {
      await group(page, h).locator('.hosthead .hoststate', { hasText: /^up$/ }).waitFor();
      await card(page, h).waitFor();
    }
    const order = await page.locator('.group').evaluateAll((gs) => gs.map((g) => g.dataset.host));
    if (order.join() !== 'local,a,b') throw new Error('groups ' + order.join());
    for (const h of ['a', 'b']) {
      await card(page, h).locator('.badge', { hasText: 'blocked' }).waitFor();
      await card(page, h).locator('.q.subj', { hasText: 'command: touch NOTES.md' }).waitFor();
    }
    // The same id and name on three hosts: three cards, one in each group.
    if (await page.locator(`.card[data-session="${ID}"]`).count() !== 3) throw new Error('not three cards');
    await shot(page, 'phone-390x844-hosts.png');
  });

  await step('a\'s card opens a\'s session: its host named, its command on the card; Yes answers a', async () => {
    await card(page, 'a').tap();
    await page.locator('#info .sub', { hasText: /^a · demo · / }).waitFor();
    await page.locator('.prompt .subject-text', { hasText: /^touch NOTES\.md$/ }).waitFor();
    await page.locator('#screen', { hasText: 'touch NOTES.md' }).waitFor();
    if (!new URL(page.url()).hash.startsWith('#a%3A')) throw new Error('hash ' + page.url());
    await page.locator('.prompt .options button', { hasText: /^Yes$/ }).tap();
    await page.locator('#notice', { hasText: 'Answered' }).waitFor();
    await page.locator('#info .badge', { hasText: /^(done|idle)$/ }).waitFor();
  });

  await step('b still waits on its prompt; a does not', async () => {
    await page.locator('#back').tap();
    await card(page, 'b').locator('.badge', { hasText: 'blocked' }).waitFor();
    await card(page, 'a').locator('.badge', { hasText: /^(done|idle)$/ }).waitFor();
  });

  await ask('host b down');
  await step('b off the network: its group says reconnecting or down, with why, and its answer buttons are off', async () => {
    await group(page, 'b').locator('.hoststate', { hasText: /^(reconnecting|down)$/ }).waitFor();
    await group(page, 'b').locator('.hosterr', { hasText: /\S/ }).waitFor();
    await group(page, 'b').locator('.hoststate', { hasText: /^down$/ }).waitFor();
    await group(page, 'b').locator('.hosterr', { hasText: 'refused' }).waitFor();
    await group(page, 'a').locator('.hoststate', { hasText: /^up$/ }).waitFor();
    await shot(page, 'phone-390x844-hosts-down.png');
    await card(page, 'b').tap();
    await page.locator('#info .hostnote', { hasText: 'Host b is down' }).waitFor();
    const on = await page.locator('.prompt .options button:not([disabled])').count();
    if (on !== 0) throw new Error(on + ' answer buttons still on');
    await page.locator('#back').tap();
  });

  await ask('host b up');
  await step('b back: its session is there, waiting on the same prompt, and Yes answers it', async () => {
    await group(page, 'b').locator('.hoststate', { hasText: /^up$/ }).waitFor();
    await card(page, 'b').locator('.badge', { hasText: 'blocked' }).waitFor();
    await card(page, 'b').tap();
    const yes = page.locator('.prompt .options button:not([disabled])', { hasText: /^Yes$/ });
    await yes.waitFor();
    await yes.tap();
    await page.locator('#notice', { hasText: 'Answered' }).waitFor();
  });

  await step('no script errors and no CSP violations', async () => {
    const bad = errors.filter((e) => !/net::ERR_/.test(e));
    if (bad.length) throw new Error(bad.join(' | '));
  });
} catch (e) {
  setupFailed(e);
} finally {
  await browser.close();
  finish();
}
