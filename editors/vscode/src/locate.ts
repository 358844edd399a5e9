// Finds the agentd to run, in rust-analyzer's order: the `agentd.path`
// setting, then the agentd bundled in a per-platform .vsix
// (<extension>/bin/agentd), then `agentd` on PATH; and checks it with
// `agentd version --json` before it is started: a binary of another
// protocol is refused with a message that names it and says what to do.
// Nothing here imports `vscode`.
import * as cp from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { StartError } from './client';
import { PROTOCOL_VERSION } from './protocol';

/** Where the binary came from. */
export type Source = 'setting' | 'bundled' | 'PATH';

/** What `agentd version --json` prints. */
export interface VersionInfo {
  version: string;
  commit: string;
  protocol: number;
  os: string;
  arch: string;
  go: string;
}

export interface Binary {
  path: string;
  source: Source;
  /** From `version --json`; undefined when it could not tell (see `unchecked`). */
  version?: VersionInfo;
  /** Why `version --json` told nothing (an agentd older than that command, say); initialize's protocolVersion is checked instead. */
  unchecked?: string;
}

export interface LocateOptions {
  /** The agentd.path setting, already without --stdio; "" when unset. */
  setting: string;
  /** The extension's folder; its bin/agentd is the bundled binary. Undefined: none. */
  extensionPath?: string;
  /** The environment whose PATH is searched and in which `version --json` runs. */
  env?: NodeJS.ProcessEnv;
  /** The protocol this extension speaks (PROTOCOL_VERSION). */
  protocol?: number;
  timeoutMs?: number;
}

export function describeSource(s: Source): string {
  switch (s) {
    case 'setting':
      return 'from the agentd.path setting';
    case 'bundled':
      return 'bundled with the extension';
    case 'PATH':
      return 'found on PATH';
  }
}

export function bundledPath(extensionPath: string): string {
  return path.join(extensionPath, 'bin', 'agentd');
}

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in the folders of envPath, as a shell would find it. */
export function findOnPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    if (isExecutableFile(p)) return p;
  }
  return undefined;
}

/**
 * The binary to run, by the order above; a StartError (notFound) when the
 * setting names nothing runnable, or when none of the three has one. A
 * setting is never passed over for the others: it was asked for.
 */
export function find(opts: LocateOptions): { path: string; source: Source } {
  const env = opts.env ?? process.env;
  const setting = opts.setting.trim();
  if (setting) {
    // A bare name is looked up on PATH, as a shell would; a path is taken as it is.
    const p = setting.includes('/') ? setting : findOnPath(setting, env.PATH);
    if (p && isExecutableFile(p)) return { path: p, source: 'setting' };
    const words = /\s/.test(setting) ? ' (agentd.path is the program alone, without arguments)' : '';
    const why = !p ? 'no such program on PATH' : fs.existsSync(p) ? 'not an executable file' : 'no such file';
    throw new StartError(`agentd was not found at "${setting}" (agentd.path: ${why})${words}: set agentd.path to the agentd binary, or clear it to use the agentd bundled with the extension or on PATH`, true);
  }
  if (opts.extensionPath) {
    const b = bundledPath(opts.extensionPath);
    if (isExecutableFile(b)) return { path: b, source: 'bundled' };
  }
  const onPath = findOnPath('agentd', env.PATH);
  if (onPath) return { path: onPath, source: 'PATH' };
  const bundled = opts.extensionPath ? `this extension has no agentd of its own (${bundledPath(opts.extensionPath)}: it is the universal .vsix)` : 'this extension has no agentd of its own';
  throw new StartError(
    `agentd was not found: agentd.path is not set, ${bundled}, and there is no agentd on PATH. Install the extension's .vsix for your platform (it has agentd inside), or install agentd and set agentd.path to it.`,
    true,
  );
}

/** Runs `agentd version --json`: its answer, or why there is none. */
export function readVersion(bin: string, env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<VersionInfo | string> {
  return new Promise((resolve) => {
    cp.execFile(bin, ['version', '--json'], { env, timeout: timeoutMs, maxBuffer: 64 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string };
        const how = e.killed ? `gave no answer within ${timeoutMs} ms` : typeof e.code === 'number' ? `exited with code ${e.code}` : e.signal ? `was ended by ${e.signal}` : e.message;
        const said = String(stderr).trim().split('\n')[0];
        resolve(`"${bin} version --json" ${how}${said ? `: ${said.slice(0, 200)}` : ''}`);
        return;
      }
      try {
        const v = JSON.parse(String(stdout)) as VersionInfo;
        if (typeof v !== 'object' || v === null || typeof v.protocol !== 'number') throw new Error('no protocol in it');
        resolve(v);
      } catch (x) {
        resolve(`"${bin} version --json" printed no version (${(x as Error).message}): ${String(stdout).slice(0, 120)}`);
      }
    });
  });
}

/** The message for a binary of another protocol: which one, and what to do. */
export function incompatible(b: { path: string; source: Source }, version: string, theirs: number, ours: number, hasBundled: boolean): string {
  const head = `The agentd at ${b.path} (${describeSource(b.source)}, version ${version}) speaks protocol ${theirs}, and this extension speaks protocol ${ours}: it was not started.`;
  let todo: string;
  const newer = theirs > ours;
  switch (b.source) {
    case 'setting':
      todo = `Set agentd.path to an agentd of protocol ${ours}${hasBundled ? ', or clear it to use the agentd bundled with the extension' : ''}${newer ? ', or update the extension' : ''}.`;
      break;
    case 'bundled':
      todo = 'Reinstall the extension from the .vsix for your platform, or set agentd.path to an agentd of protocol ' + ours + '.';
      break;
    case 'PATH':
      todo = newer
        ? `Update the extension, or set agentd.path to an agentd of protocol ${ours}.`
        : `Upgrade that agentd (or install the extension's .vsix for your platform, which has agentd inside), or set agentd.path to an agentd of protocol ${ours}.`;
      break;
  }
  return `${head} ${todo}`;
}

/**
 * find(), then `version --json`: a Binary to start, or a StartError that
 * says why not (nothing found: notFound; another protocol: incompatible).
 * A binary whose `version --json` fails is started all the same (with
 * `unchecked` saying why): it may predate the command, and its
 * initialize's protocolVersion is checked then; one that cannot start at
 * all fails there with its own message.
 */
export async function locate(opts: LocateOptions): Promise<Binary> {
  const found = find(opts);
  const env = opts.env ?? process.env;
  const ours = opts.protocol ?? PROTOCOL_VERSION;
  const v = await readVersion(found.path, env, opts.timeoutMs);
  if (typeof v === 'string') return { ...found, unchecked: v };
  if (v.protocol !== ours) {
    const hasBundled = !!opts.extensionPath && found.source !== 'bundled' && isExecutableFile(bundledPath(opts.extensionPath));
    throw new StartError(incompatible(found, v.version, v.protocol, ours, hasBundled), false, undefined, true);
  }
  return { ...found, version: v };
}

/** One line for the log and Show Version: the binary, where it came from, its version. */
export function describeBinary(b: Binary): string {
  const v = b.version;
  const ver = v ? `version ${v.version} (commit ${v.commit ? v.commit.slice(0, 12) : 'unknown'}, protocol ${v.protocol}, ${v.os}/${v.arch}, ${v.go})` : `version unknown: ${b.unchecked}`;
  return `agentd ${b.path} (${describeSource(b.source)}), ${ver}`;
}
