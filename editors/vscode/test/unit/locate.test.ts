// Which agentd the extension runs (issue 28): agentd.path, then the agentd
// bundled in the .vsix, then PATH; each checked with `version --json`, and
// one of another protocol refused with a message that names it and says
// what to do. Fake agentds are shell scripts that print a version; the real
// one is started at the end.
import { fake, vscode as fakeVscode } from './fake_vscode';

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { StartError } from '../../src/client';
import { Ctx } from '../../src/ctx';
import { bundledPath, describeBinary, find, locate } from '../../src/locate';
import { PROTOCOL_VERSION } from '../../src/protocol';
import { Status, Supervisor } from '../../src/supervisor';
import { agentdBin, clientOptions, daemonEnv, eventually, newSocket } from './agentd';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-locate-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

/** A fake agentd at dir/where/agentd whose `version --json` says version and protocol. */
function fakeAgentd(where: string, version: string, protocol = PROTOCOL_VERSION, name = 'agentd'): string {
  const d = path.join(dir, where);
  fs.mkdirSync(d, { recursive: true });
  const p = path.join(d, name);
  const json = JSON.stringify({ version, commit: 'c0ffee', protocol, os: 'linux', arch: 'amd64', go: 'go1.26' });
  fs.writeFileSync(p, `#!/bin/sh\nif [ "$1 $2" = "version --json" ]; then echo '${json}'; exit 0; fi\necho "fake agentd" >&2\nexit 2\n`, { mode: 0o755 });
  return p;
}

// An extension folder with bin/agentd (a per-platform .vsix), one without (the universal one).
const withBundle = path.join(dir, 'ext-linux-x64');
fakeAgentd('ext-linux-x64/bin', 'bundled-1');
const universal = path.join(dir, 'ext-universal');
fs.mkdirSync(universal);
const onPath = fakeAgentd('pathdir', 'path-1');
const setting = fakeAgentd('setting', 'setting-1');
const env = (PATH: string) => ({ ...process.env, PATH });
const PATH = `/nonexistent:${path.dirname(onPath)}:/usr/bin:/bin`;
const NOPATH = '/usr/bin:/bin';

test('the order: agentd.path, then the bundled agentd, then PATH', async () => {
  assert.deepEqual(find({ setting, extensionPath: withBundle, env: env(PATH) }), { path: setting, source: 'setting' });
  assert.deepEqual(find({ setting: '', extensionPath: withBundle, env: env(PATH) }), { path: bundledPath(withBundle), source: 'bundled' });
  assert.deepEqual(find({ setting: '', extensionPath: universal, env: env(PATH) }), { path: onPath, source: 'PATH' });
  // What each one says it is comes with it.
  const b = await locate({ setting: '', extensionPath: withBundle, env: env(PATH) });
  assert.equal(b.source, 'bundled');
  assert.equal(b.version?.version, 'bundled-1');
  assert.equal(describeBinary(b), `agentd ${bundledPath(withBundle)} (bundled with the extension), version bundled-1 (commit c0ffee, protocol 1, linux/amd64, go1.26)`);
  assert.equal((await locate({ setting, extensionPath: withBundle, env: env(PATH) })).version?.version, 'setting-1');
  assert.equal((await locate({ setting: '', extensionPath: universal, env: env(PATH) })).version?.version, 'path-1');
});

test('agentd.path as a bare name is looked up on PATH; one that names nothing is not passed over for the others', () => {
  const other = fakeAgentd('pathdir', 'other-1', PROTOCOL_VERSION, 'agentd-other');
  assert.deepEqual(find({ setting: 'agentd-other', extensionPath: withBundle, env: env(PATH) }), { path: other, source: 'setting' });
  const missing = path.join(dir, 'no-such', 'agentd');
  assert.throws(
    () => find({ setting: missing, extensionPath: withBundle, env: env(PATH) }),
    (e: unknown) => {
      assert.ok(e instanceof StartError && e.notFound);
      assert.equal(e.message, `agentd was not found at "${missing}" (agentd.path: no such file): set agentd.path to the agentd binary, or clear it to use the agentd bundled with the extension or on PATH`);
      return true;
    },
  );
});

test('nothing anywhere: not found, saying where it looked and what to do', () => {
  assert.throws(
    () => find({ setting: '', extensionPath: universal, env: env(NOPATH) }),
    (e: unknown) => {
      assert.ok(e instanceof StartError && e.notFound);
      assert.equal(
        e.message,
        `agentd was not found: agentd.path is not set, this extension has no agentd of its own (${bundledPath(universal)}: it is the universal .vsix), and there is no agentd on PATH. Install the extension's .vsix for your platform (it has agentd inside), or install agentd and set agentd.path to it.`,
      );
      return true;
    },
  );
});

test('another protocol is refused: the message names the binary, where it came from, its version, and what to do', async () => {
  const newer = fakeAgentd('newer', '9.0.0', PROTOCOL_VERSION + 1);
  await assert.rejects(locate({ setting: newer, extensionPath: withBundle, env: env(PATH) }), (e: unknown) => {
    assert.ok(e instanceof StartError && e.incompatible && !e.notFound);
    assert.equal(
      e.message,
      `The agentd at ${newer} (from the agentd.path setting, version 9.0.0) speaks protocol 2, and this extension speaks protocol 1: it was not started. Set agentd.path to an agentd of protocol 1, or clear it to use the agentd bundled with the extension, or update the extension.`,
    );
    return true;
  });
  const older = fakeAgentd('olderpath', '0.0.1', 0);
  await assert.rejects(locate({ setting: '', extensionPath: universal, env: env(`${path.dirname(older)}:${NOPATH}`) }), (e: unknown) => {
    assert.ok(e instanceof StartError && e.incompatible);
    assert.equal(
      e.message,
      `The agentd at ${older} (found on PATH, version 0.0.1) speaks protocol 0, and this extension speaks protocol 1: it was not started. Upgrade that agentd (or install the extension's .vsix for your platform, which has agentd inside), or set agentd.path to an agentd of protocol 1.`,
    );
    return true;
  });
});

test('a binary whose version --json fails is still started (initialize decides); its start failure is said as before', async () => {
  const exits2 = path.join(dir, 'exits2');
  fs.writeFileSync(exits2, '#!/bin/sh\necho "agentd: bad rules" >&2\nexit 2\n', { mode: 0o755 });
  const b = await locate({ setting: exits2, env: env(PATH) });
  assert.equal(b.version, undefined);
  assert.equal(b.unchecked, `"${exits2} version --json" exited with code 2: agentd: bad rules`);
});

test('the Supervisor refuses an incompatible agentd once, without starting it or retrying', async () => {
  const newer = fakeAgentd('newer2', '9.0.0', PROTOCOL_VERSION + 1);
  const started = path.join(dir, 'newer2', 'started');
  // Were it started with --stdio, it would leave a mark.
  fs.appendFileSync(newer, '');
  fs.writeFileSync(newer, fs.readFileSync(newer, 'utf8').replace('echo "fake agentd"', `: >"${started}"; echo "fake agentd"`));
  const sup = new Supervisor(() => clientOptions(), { baseDelayMs: 10, locate: () => locate({ setting: newer, env: env(PATH) }) });
  const seen: Status[] = [];
  sup.onDidChangeStatus((s) => seen.push(s));
  await sup.start();
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(
    seen.map((s) => s.kind),
    ['starting', 'failed'],
  );
  const f = sup.status as Extract<Status, { kind: 'failed' }>;
  assert.equal(f.startup, true);
  assert.match(f.message, /speaks protocol 2, and this extension speaks protocol 1: it was not started/);
  assert.equal(fs.existsSync(started), false, 'it was never started with --stdio');
  await sup.stop();
});

test('the real agentd: found on PATH, its version --json read, started; the log names the binary, its version and the daemon', async () => {
  const bin = agentdBin();
  const sock = newSocket();
  const lines: string[] = [];
  const e = daemonEnv(sock);
  e.PATH = `${path.dirname(bin)}:${NOPATH}`;
  // A bare name in agentd.path would go the same way; here nothing is set and the extension has no bundle.
  const sup = new Supervisor(() => clientOptions({ env: e }), { log: (l) => lines.push(l), locate: () => locate({ setting: '', extensionPath: universal, env: e }) });
  try {
    await sup.start();
    assert.equal(sup.status.kind, 'running');
    const r = sup.status as Extract<Status, { kind: 'running' }>;
    assert.equal(r.binary?.path, bin);
    assert.equal(r.binary?.source, 'PATH');
    assert.equal(r.binary?.version?.protocol, PROTOCOL_VERSION);
    const v = r.binary!.version!.version;
    assert.ok(lines.some((l) => l.startsWith(`[client] agentd ${bin} (found on PATH), version ${v} (commit `)), lines.join('\n'));
    assert.ok(lines.some((l) => new RegExp(`started \\(pid \\d+, protocol 1\\); its daemon: version ${v.replace(/[+.]/g, '\\$&')} \\(pid \\d+, protocol 1, the same build\\)`).test(l)), lines.join('\n'));
  } finally {
    await sup.stop();
  }
});

function newCtx(extensionPath: string): Ctx {
  const ext = { extensionPath, extension: { packageJSON: { version: '0.0.0-test' } }, workspaceState: { get: () => undefined, update: async () => undefined } };
  return new Ctx(ext as never);
}

test('the window with nothing found: one notification that says so and offers the setting', async () => {
  fake.reset();
  const saved = process.env.PATH;
  process.env.PATH = NOPATH;
  fake.onMessage = (m) => (m.severity === 'error' ? 'Open Settings' : undefined);
  const ctx = newCtx(universal);
  try {
    await ctx.start();
    await eventually('the setting opened', () => fake.commandsRun.some((c) => c.id === 'workbench.action.openSettings'), 5000);
    const shown = fake.shown.filter((m) => m.severity !== 'info');
    assert.equal(shown.length, 1, JSON.stringify(fake.shown));
    assert.equal(shown[0].severity, 'error');
    assert.match(shown[0].message, /^agentd was not found: agentd\.path is not set, this extension has no agentd of its own/);
    assert.deepEqual(shown[0].items, ['Open Settings', 'Show Log']);
    assert.deepEqual(fake.commandsRun.find((c) => c.id === 'workbench.action.openSettings')?.args, ['agentd.path']);
  } finally {
    process.env.PATH = saved;
    await ctx.dispose();
  }
});

test('Show Version: the bundled binary, its version, and the daemon it reached', async () => {
  fake.reset();
  // A folder like an installed per-platform .vsix: bin/agentd is the real agentd.
  const ext = path.join(dir, 'ext-real');
  fs.mkdirSync(path.join(ext, 'bin'), { recursive: true });
  fs.copyFileSync(agentdBin(), path.join(ext, 'bin', 'agentd'));
  fs.chmodSync(path.join(ext, 'bin', 'agentd'), 0o755);
  const saved = { PATH: process.env.PATH, AGENTD_SOCKET: process.env.AGENTD_SOCKET, XDG_STATE_HOME: process.env.XDG_STATE_HOME };
  Object.assign(process.env, daemonEnv(newSocket()), { PATH: NOPATH });
  const ctx = newCtx(ext);
  try {
    await ctx.start();
    assert.equal(ctx.agentd.status.kind, 'running');
    await ctx.showVersion();
    const m = fake.shown.find((x) => x.severity === 'info');
    const bin = path.join(ext, 'bin', 'agentd');
    assert.match(m?.message ?? '', new RegExp(`^agentd ${bin.replace(/[.]/g, '\\.')} \\(bundled with the extension\\), version \\S+ \\(commit \\w*, protocol 1, linux/\\w+, go[\\d.]+\\); its daemon: version \\S+ \\(pid \\d+, protocol 1, the same build\\); extension agentd-vscode 0\\.0\\.0-test\\.$`));
    assert.deepEqual(m?.items, ['Show Log']);
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    await ctx.dispose();
  }
});

void fakeVscode;
