// The real agentd for the tests: $AGENTD_BIN, else built once from this
// repository with `go build`. Its log goes to a temporary state dir.
import * as cp from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { AgentdClient, ClientOptions } from '../../src/client';
import { StateName, StateNotification } from '../../src/protocol';

let built: string | undefined;

export function agentdBin(): string {
  if (process.env.AGENTD_BIN) return process.env.AGENTD_BIN;
  if (built) return built;
  const repo = path.resolve(__dirname, '..', '..', '..', '..', '..');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-bin-')), 'agentd');
  cp.execFileSync('go', ['build', '-o', out, './cmd/agentd'], { cwd: repo, stdio: 'inherit' });
  return (built = out);
}

export const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-vscode-unit-'));

// Each test's clients reach a daemon of the test's own, in a folder of this
// run (never the person's daemon); every one is stopped, with whatever
// sessions it still has, when the tests end.
const sockets: string[] = [];
let nextDaemon = 0;

/** A fresh daemon socket path (the daemon starts with its first client). */
export function newSocket(): string {
  const sock = path.join(stateDir, `run-${++nextDaemon}`, 'agentd.sock');
  sockets.push(sock);
  return sock;
}

/** The environment a client of the daemon at sock runs in. */
export function daemonEnv(sock: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: stateDir, AGENTD_SOCKET: sock };
  delete env.AGENTD_SESSION;
  delete env.AGENTD_TOKEN;
  return env;
}

/** Ends the daemon at sock and its sessions (agentd stop --force). */
export function stopDaemon(sock: string): void {
  cp.spawnSync(agentdBin(), ['stop', '--force'], { env: daemonEnv(sock), stdio: 'ignore', timeout: 20_000 });
}

process.on('exit', () => {
  for (const sock of sockets) stopDaemon(sock);
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** Options for a client of a new daemon of its own, unless extra.env names one. */
export function clientOptions(extra: Partial<ClientOptions> = {}): ClientOptions {
  return {
    path: agentdBin(),
    args: ['--cooldown', '1s'],
    env: daemonEnv(newSocket()),
    clientInfo: { name: 'agentd-vscode-tests' },
    ...extra,
  };
}

/** The demo agent's argv: agentd's own scripted agent. */
export const demoArgv = () => [agentdBin(), 'demo-agent'];

export function startAgentd(extra: Partial<ClientOptions> = {}): Promise<AgentdClient> {
  return AgentdClient.start(clientOptions(extra));
}

/** Collects session/state notifications and waits for a given state. */
export class StateLog {
  readonly seen: StateNotification[] = [];
  private waiters: Array<() => void> = [];
  constructor(client: { onState: (l: (n: StateNotification) => void) => unknown }) {
    client.onState((n) => {
      this.seen.push(n);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  async waitFor(sessionId: string, state: StateName, timeoutMs = 30_000): Promise<StateNotification> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const n = this.seen.find((x) => x.sessionId === sessionId && x.state === state);
      if (n) return n;
      const left = end - Date.now();
      if (left <= 0) {
        const mine = this.seen.filter((x) => x.sessionId === sessionId).map((x) => `${x.state}(${x.reason})`);
        throw new Error(`${sessionId} never turned ${state} within ${timeoutMs} ms; it was told ${mine.join(' → ') || 'nothing'}`);
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Forgets what was seen, so the next waitFor waits for a new notification. */
  clear(): void {
    this.seen.length = 0;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function eventually<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last seen: ${JSON.stringify(v)})`);
    await sleep(20);
  }
}
