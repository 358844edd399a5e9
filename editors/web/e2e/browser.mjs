// The web page in Debian's Chromium (playwright-core), against the real
// daemon, the real `agentd web`, the demo agent and the real Claude Code
// on a fake model server. browser_test.go starts all of those, blocks both
// agents on their permission prompts and runs this script with:
//   LINK       the link agentd web printed (with its one-time code)
//   AGENTD, TOKEN_FILE  the agentd binary and agentd web's token file (to rotate it)
//   CHROMIUM   the browser (default /usr/bin/chromium)
//   ARTIFACTS  where screenshots go
//   DEMO, CLAUDE  the two session ids; CLAUDE_FILE the file Claude's command makes
// Each step prints "ok N - what" or "not ok N - what: why"; the last line is
// "# pass N" / "# fail N", and the exit code is non-zero on any failure.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

import { finish, need, setupFailed, step } from './tap.mjs';

const LINK = need('LINK');
const ARTIFACTS = need('ARTIFACTS');
const DEMO = need('DEMO');
const CLAUDE = need('CLAUDE');
const CLAUDE_FILE = need('CLAUDE_FILE');
const AGENTD = need('AGENTD');
const TOKEN_FILE = need('TOKEN_FILE');
const BASE = new URL(LINK).origin;
// Generous: a guard against a hang on a busy 2-core machine, not a speed test.
const WAIT = 60_000;

async function waitFor(what, cond) {
  const end = Date.now() + WAIT;
  let last;
  for (;;) {
    try { last = await cond(); if (last === true) return; } catch (e) { last = e.message; }
    if (Date.now() > end) throw new Error(`waited ${WAIT / 1000} s for ${what}; last saw ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const shot = async (page, name) => page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: false });
const card = (page, id) => page.locator(`.card[data-session="${id}"]`);
const notice = (page) => page.locator('#notice');

const browser = await chromium.launch({
  executablePath: need('CHROMIUM', '/usr/bin/chromium'),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const errors = [];
// clock: 'flowing' fakes the page's timers (time runs, and a test can jump
// it forward); 'paused' stops them, so nothing on a timer happens there.
async function open(viewport, mobile, clock) {
  const ctx = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, deviceScaleFactor: 1 });
  if (clock) await ctx.clock.install();
  if (clock === 'paused') await ctx.clock.pauseAt(Date.now() + 1000);
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  return { ctx, page };
}

try {
  const phone = await open({ width: 390, height: 844 }, true, 'flowing');
  // The desktop tab's watchdog is paused: it is to tap a prompt that went
  // stale within the stale bound, which only the daemon's guard can catch.
  const desk = await open({ width: 1280, height: 800 }, false, 'paused');

  await step('the printed link signs in and its code leaves the address bar', async () => {
    await phone.page.goto(LINK);
    await phone.page.waitForURL((u) => u.pathname === '/' && !u.search.includes('code'));
    const cookies = await phone.ctx.cookies();
    const c = cookies.find((x) => x.name === 'agentd_web');
    if (!c || !c.httpOnly || c.sameSite !== 'Strict') throw new Error('cookie ' + JSON.stringify(cookies));
    if (await phone.page.evaluate(() => document.cookie.includes('agentd_web'))) throw new Error('the cookie is readable from script');
  });

  await step('phone: both sessions are listed as blocked, with what each approves', async () => {
    for (const id of [DEMO, CLAUDE]) {
      await card(phone.page, id).locator('.badge', { hasText: 'blocked' }).waitFor();
    }
    // The list names what a prompt approves where it reads one (its
    // question otherwise): Claude's Bash prompt, its command.
    await card(phone.page, CLAUDE).locator('.q.subj', { hasText: 'command: touch from-the-phone.txt' }).waitFor();
    await shot(phone.page, 'phone-390x844-list.png');
  });

  await step('phone: the demo agent shows its question, options as buttons, and its screen', async () => {
    await card(phone.page, DEMO).click();
    await phone.page.locator('.prompt .question', { hasText: 'Do you want to proceed?' }).waitFor();
    const labels = await phone.page.locator('.prompt .options button').allTextContents();
    if (labels[0] !== 'Yes' || labels.length !== 3) throw new Error('buttons ' + JSON.stringify(labels));
    await phone.page.locator('#screen', { hasText: 'touch NOTES.md' }).waitFor();
    // What it approves is on the card itself, not only in the screen box.
    await phone.page.locator('.prompt .subject-text', { hasText: /^touch NOTES\.md$/ }).waitFor();
    await phone.page.locator('.prompt .subject-kind', { hasText: 'command' }).waitFor();
    // agentd web runs without --allow-input: no box to type into the agent.
    if (await phone.page.locator('#sendform').isVisible()) throw new Error('the typing box shows without --allow-input');
    await shot(phone.page, 'phone-390x844-demo-blocked.png');
  });

  await step('phone: tapping Yes answers the demo agent; it finishes, and looking at it marks it seen (idle)', async () => {
    await phone.page.locator('.prompt .options button', { hasText: /^Yes$/ }).tap();
    await notice(phone.page).filter({ hasText: 'Answered' }).waitFor();
    // done → the page marks it seen → idle.
    await phone.page.locator('#info .badge', { hasText: /^idle$/ }).waitFor();
    await waitFor('the prompt card to leave', async () => (await phone.page.locator('.prompt').count()) === 0);
  });

  let deskLink = '';
  await step('phone: + device shows a one-time link and its QR code for another device', async () => {
    await phone.page.locator('#back').tap();
    await phone.page.locator('#linkbtn').tap();
    await phone.page.locator('#linkdlg[open]').waitFor();
    deskLink = await phone.page.locator('#linktext').textContent();
    if (!deskLink.startsWith(BASE + '/login?code=')) throw new Error('link ' + deskLink);
    const qr = await phone.page.evaluate(() => document.getElementById('linkqr').width);
    if (qr < 100) throw new Error('QR code ' + qr + ' px wide');
    await shot(phone.page, 'phone-390x844-link-device.png');
    await phone.page.locator('#linkclose').tap();
  });

  await step('the printed link, opened again in another browser, signs nobody in', async () => {
    const other = await open({ width: 390, height: 844 }, true);
    const res = await other.page.goto(LINK);
    if (res.status() !== 401) throw new Error('status ' + res.status());
    await other.page.locator('h2', { hasText: 'This link does not sign in' }).waitFor();
    await other.page.locator('p', { hasText: 'used already' }).waitFor();
    if ((await other.ctx.cookies()).length) throw new Error('a cookie was set');
    await other.ctx.close();
  });

  await step('desktop: signs in with the phone\'s link, lists both, and shows Claude Code\'s question and its coloured screen', async () => {
    await desk.page.goto(deskLink);
    await desk.page.waitForURL((u) => u.pathname === '/');
    await card(desk.page, CLAUDE).click();
    await desk.page.locator('.prompt .question', { hasText: 'Do you want to proceed?' }).waitFor();
    const labels = await desk.page.locator('.prompt .options button').allTextContents();
    if (labels[0] !== 'Yes' || labels[labels.length - 1] !== 'No') throw new Error('buttons ' + JSON.stringify(labels));
    await desk.page.locator('#screen', { hasText: 'Bash command' }).waitFor();
    // The text may come before the first coloured frame of a screen the
    // page has just opened: wait for colour, as a person would see it come.
    await waitFor('a coloured run on the screen', async () =>
      (await desk.page.evaluate(() => [...document.querySelectorAll('#screen span')].filter((s) => s.style.color).length)) > 0);
    await shot(desk.page, 'desktop-1280x800-claude-blocked.png');
  });

  // The desktop tab stops hearing from the server, as a laptop whose lid
  // closed or a phone on a flaky network would: its event stream is closed
  // (Chromium's offline emulation leaves an open loopback stream alone)
  // and any reconnection is refused, so it keeps showing the prompt after
  // the phone answered it.
  await step('desktop: its live feed is cut (it will show a stale prompt)', async () => {
    await desk.page.route('**/api/events**', (r) => r.abort());
    await desk.page.evaluate(() => source.close()); // eslint-disable-line no-undef
  });

  const phoneYes = phone.page.locator('.prompt .options button', { hasText: /^Yes$/ });
  await step('phone: Claude Code\'s question and screen', async () => {
    await card(phone.page, CLAUDE).tap();
    await phone.page.locator('.prompt .question', { hasText: 'Do you want to proceed?' }).waitFor();
    // The screen is fetched after the card: wait for it, or the shot shows an empty box.
    await phone.page.locator('#screen', { hasText: 'touch from-the-phone.txt' }).waitFor();
    await phone.page.locator('.prompt .subject-text', { hasText: /^touch from-the-phone\.txt$/ }).waitFor();
    await shot(phone.page, 'phone-390x844-claude-blocked.png');
  });

  // A sleeping phone: its feed goes quiet with no error. The page's clock
  // jumps past three keep-alives while new connections are refused.
  // How often the server pings a page's feed, as /api/hello tells the page.
  const keepAliveOf = (page) => page.evaluate(async () => (await (await fetch('/api/hello')).json()).keepAliveMs);
  await step('phone: a feed quiet for three keep-alives shows the page stale, with the answer buttons off', async () => {
    const keepAlive = await keepAliveOf(phone.page);
    await phone.page.locator('#conn', { hasText: /^live$/ }).waitFor();
    await phone.page.route('**/api/events**', (r) => r.abort());
    await phone.page.clock.fastForward(3 * keepAlive + 2000);
    await phone.page.locator('#conn', { hasText: 'stale' }).waitFor();
    await phone.page.locator('#banner', { hasText: 'The answer buttons are off' }).waitFor();
    if (!(await phoneYes.isDisabled())) throw new Error('the Yes button is enabled on a stale page');
    await shot(phone.page, 'phone-390x844-stale.png');
  });

  await step('phone: when the feed is back the page is live and its buttons work again', async () => {
    await phone.page.unroute('**/api/events**');
    await phone.page.clock.fastForward(await keepAliveOf(phone.page));
    await phone.page.locator('#conn', { hasText: /^live$/ }).waitFor();
    if (!(await phone.page.locator('#banner').isHidden())) throw new Error('the stale banner stays');
    await waitFor('the Yes button to be enabled', async () => !(await phoneYes.isDisabled()));
  });

  await step('phone: tapping Yes on Claude Code runs its command (the file exists)', async () => {
    await phoneYes.tap();
    await notice(phone.page).filter({ hasText: 'Answered' }).waitFor();
    await waitFor(CLAUDE_FILE + ' to exist', () => fs.existsSync(CLAUDE_FILE));
    await waitFor('Claude Code to leave blocked on the phone', async () =>
      !(await phone.page.locator('#info .badge').textContent()).includes('blocked'));
    await shot(phone.page, 'phone-390x844-claude-answered.png');
  });

  await step('desktop: a second tap on the now-stale prompt is refused, and the page says so', async () => {
    const yes = desk.page.locator('.prompt .options button', { hasText: /^Yes$/ });
    if (!(await yes.isVisible())) throw new Error('the stale prompt is no longer shown: the feed was not cut');
    await yes.click();
    await notice(desk.page).filter({ hasText: 'no longer the one on screen' }).waitFor();
    const text = await notice(desk.page).textContent();
    if (!/Nothing was typed/.test(text) || !/-3202[15]/.test(text)) throw new Error('notice: ' + text);
    // Refused, the page fetches the sessions as they are: the stale card goes.
    await waitFor('the stale prompt card to leave the desktop page', async () => (await desk.page.locator('.prompt').count()) === 0);
    await shot(desk.page, 'desktop-1280x800-stale-refused.png');
  });

  // The stale-tab sequence, with the demo agent: a tab shows the
  // prompt for one command and goes quiet; another client answers it; the
  // agent asks about another command under the same question and options.
  // The old tap must be refused (nothing typed), and the card must then
  // show the new command.
  const cli = (...args) => execFileSync(AGENTD, args, { env: process.env, encoding: 'utf8' });
  await step('desktop: live again, it shows the demo agent\'s prompt for touch NOTES.md', async () => {
    await desk.page.unroute('**/api/events**');
    await desk.page.reload();
    await card(desk.page, DEMO).click();
    cli('send', DEMO, 'please run touch NOTES.md');
    await desk.page.locator('.prompt .subject-text', { hasText: /^touch NOTES\.md$/ }).waitFor();
  });

  await step('desktop: its feed goes quiet, as a sleeping tab\'s does', async () => {
    await desk.page.route('**/api/events**', (r) => r.abort());
    await desk.page.evaluate(() => source.close()); // eslint-disable-line no-undef
  });

  await step('another client answers it; the agent then asks about rm -rf ~/projects under the same question', async () => {
    cli('answer', DEMO, '1');
    cli('wait', DEMO, '--until', 'done', '--timeout', '60s');
    cli('send', DEMO, 'please run rm -rf ~/projects');
    const out = cli('wait', DEMO, '--until', 'blocked', '--timeout', '60s', '--json');
    const ev = JSON.parse(out.trim().split('\n').pop());
    if (!ev.prompt || !ev.prompt.subject || ev.prompt.subject.text !== 'rm -rf ~/projects' || ev.prompt.question !== 'Do you want to proceed?') {
      throw new Error('the second prompt: ' + out);
    }
    await phone.page.locator('#back').tap().catch(() => {});
    await card(phone.page, DEMO).tap();
    await phone.page.locator('.prompt .subject-text', { hasText: /^rm -rf ~\/projects$/ }).waitFor();
    await shot(phone.page, 'phone-390x844-demo-subject.png');
  });

  await step('desktop: tapping Yes on the stale touch NOTES.md card is refused, and the card then shows rm -rf ~/projects', async () => {
    const stale = desk.page.locator('.prompt .subject-text', { hasText: /^touch NOTES\.md$/ });
    if (!(await stale.isVisible())) throw new Error('the stale card is no longer shown: the feed was not cut');
    await desk.page.locator('.prompt .options button', { hasText: /^Yes$/ }).click();
    await notice(desk.page).filter({ hasText: 'no longer the one on screen' }).waitFor();
    await desk.page.locator('.prompt .subject-text', { hasText: /^rm -rf ~\/projects$/ }).waitFor();
    // Nothing was typed: the agent still waits on the rm.
    const ls = JSON.parse(cli('ls', '--json'));
    const demo = ls.sessions.find((x) => x.sessionId === DEMO);
    if (demo.state !== 'blocked' || demo.prompt.subject.text !== 'rm -rf ~/projects') throw new Error('the demo agent after the stale tap: ' + JSON.stringify(demo));
    await shot(desk.page, 'desktop-1280x800-stale-subject-refused.png');
    cli('answer', DEMO, 'No, and tell the agent what to do differently');
  });

  await step('phone: after agentd web --rotate the open page says it is signed out, and stops', async () => {
    execFileSync(AGENTD, ['web', '--rotate'], { env: { ...process.env, AGENTD_WEB_TOKEN_FILE: TOKEN_FILE } });
    await phone.page.locator('#conn', { hasText: 'signed out' }).waitFor();
    await phone.page.locator('#banner', { hasText: '--rotate' }).waitFor();
  });

  await step('a browser that opens wrong links is locked out, with a page saying when to retry', async () => {
    const other = await open({ width: 390, height: 844 }, true);
    let res;
    for (let i = 0; i < 5; i++) res = await other.page.goto(BASE + '/login?code=wrong' + i);
    if (res.status() !== 429 || !res.headers()['retry-after']) throw new Error('status ' + res.status() + ' ' + JSON.stringify(res.headers()));
    await other.page.locator('h2', { hasText: 'Too many wrong sign-in links' }).waitFor();
    await other.page.locator('p', { hasText: /Try again in \d+ seconds/ }).waitFor();
    await shot(other.page, 'phone-390x844-locked-out.png');
    await other.ctx.close();
  });

  await step('no script errors and no CSP violations in either page', async () => {
    // The refused stale answer is a 409 by design; the aborted event stream is net::ERR_FAILED.
    // The lockout step's pages are 401 and 429 by design.
    const bad = errors.filter((e) => !/status of (409 \(Conflict\)|401 \(Unauthorized\)|429 \(Too Many Requests\))|net::ERR_FAILED/.test(e));
    if (bad.length) throw new Error(bad.join(' | '));
  });
} catch (e) {
  setupFailed(e);
} finally {
  await browser.close();
  finish();
}
