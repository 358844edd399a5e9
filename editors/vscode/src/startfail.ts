// Why agentd did not start, said in one message: what went wrong, the
// command line, and the lines of agentd's stderr that tell the cause (a Go
// program's "flag provided but not defined: -x" comes first, then pages of
// usage: the usage is left out). Nothing here imports `vscode`.

/** Keeps the first `head` and the last `tail` lines written to stderr. */
export class StderrTail {
  private readonly first: string[] = [];
  private readonly last: string[] = [];
  private dropped = 0;

  constructor(
    private readonly head = 20,
    private readonly tail = 40,
  ) {}

  push(line: string): void {
    if (this.first.length < this.head) {
      this.first.push(line);
      return;
    }
    this.last.push(line);
    if (this.last.length > this.tail) {
      this.last.shift();
      this.dropped++;
    }
  }

  /** The lines kept, with a marker where lines were let go. */
  lines(): string[] {
    return [...this.first, ...(this.dropped ? [`… (${this.dropped} lines)`] : []), ...this.last];
  }
}

/**
 * The lines of stderr that say why a program failed: those before its usage
 * text (else all), blank ones and agentd's own log lines below WARN (it
 * runs with --verbose) dropped, the last `max`, each at most 240
 * characters.
 */
export function excerpt(lines: string[], max = 6): string[] {
  const kept: string[] = [];
  for (const l of lines) {
    if (kept.length > 0 && /^\s*usage[\s:]/i.test(l)) break;
    if (l.trim() === '' || /^time=\S+ level=(DEBUG|INFO)\b/.test(l)) continue;
    kept.push(l.length > 240 ? `${l.slice(0, 239)}…` : l);
  }
  return kept.slice(-max);
}

/** A command line as a person would type it in a shell. */
export function cmdline(argv: string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export interface StartFailure {
  argv: string[];
  code: number | null;
  signal: string | null;
  stderr: string[];
  /** initialize's error answer, when agentd refused rather than died. */
  refused?: { code: number; message: string };
}

function howItEnded(code: number | null, signal: string | null): string {
  return signal ? `was ended by ${signal}` : `exited with code ${code}`;
}

/** One paragraph: what went wrong, the command, agentd's stderr. */
export function describeStartFailure(f: StartFailure): string {
  const said = f.refused?.message.replace(/^agentd: /, '');
  const head = said
    ? `agentd did not start: it refused initialize: ${said} (it ${howItEnded(f.code, f.signal)})`
    : `agentd did not start: it ${howItEnded(f.code, f.signal)} before it answered initialize`;
  const parts = [head.replace(/\.?$/, '.'), `Command: ${cmdline(f.argv)}.`];
  // The refusal agentd also wrote to stderr (and logged) is said already.
  const gist = said?.slice(0, 40);
  const err = excerpt(f.stderr).filter((l) => !(said && gist && (said.includes(l.replace(/^agentd: /, '').trim()) || l.includes(gist))));
  if (err.length) parts.push(`Its stderr: ${err.join(' / ')}`);
  return parts.join(' ');
}

export interface PathSetting {
  /** The program to run. */
  path: string;
  /** What came after --stdio, --private left out. */
  args: string[];
  /** --private came after --stdio. */
  private: boolean;
  /** Says the right form when the setting had --stdio; undefined when it had not. */
  note?: string;
}

/**
 * agentd.path is the program alone; the extension adds --stdio. A setting
 * that has it (the whole command line, as typed in a shell) is taken apart:
 * the program before it, the arguments after it.
 */
export function splitStdio(setting: string): PathSetting {
  const m = /^(.*?)\s+--?stdio(?:\s+(.*))?$/.exec(setting.trim());
  if (!m || m[1].trim() === '') return { path: setting, args: [], private: false };
  const after = (m[2] ?? '').split(/\s+/).filter(Boolean);
  const path = m[1].trim();
  return {
    path,
    args: after.filter((a) => a !== '--private'),
    private: after.includes('--private'),
    note: `agentd.path "${setting}" has --stdio, which the extension adds itself: set it to "${path}" (it runs that way now).`,
  };
}
