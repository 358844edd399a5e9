// Words and icons for what a person sees: the badge text, durations, state
// labels, agent icons, and splitting a typed command line. Pure functions;
// nothing here imports `vscode`.
import { Counts } from './sessions';
import { Prompt, Session, StateName, Subject } from './protocol';

/** Codicon per state, for the badge and the tree. */
export const STATE_ICONS: Record<StateName, string> = {
  blocked: 'bell',
  error: 'error',
  done: 'check',
  working: 'sync~spin',
  idle: 'circle-outline',
  exited: 'circle-slash',
};

/** The badge counts these, most urgent first; exited sessions are not counted. */
const BADGE_STATES: StateName[] = ['blocked', 'error', 'done', 'working', 'idle'];

/** E.g. `$(bell) 1 blocked · 2 working`; `$(hubot) agentd` when nothing runs. */
export function badgeText(counts: Counts): string {
  const parts = BADGE_STATES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  if (parts.length === 0) return '$(hubot) agentd';
  const top = BADGE_STATES.find((s) => counts[s] > 0)!;
  return `$(${STATE_ICONS[top]}) ${parts.join(' · ')}`;
}

/** The most urgent state present, or undefined when no session is live. */
export function urgentState(counts: Counts): StateName | undefined {
  return BADGE_STATES.find((s) => counts[s] > 0);
}

/** `4s`, `12m`, `1h 5m`, `2d 3h`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** How long the session has been in its state, now. */
export function age(s: Session, now = Date.now()): string {
  const t = Date.parse(s.since);
  return Number.isNaN(t) ? '' : duration(now - t);
}

/** `done (completed)`, `exited (code 1)`, `blocked`. */
export function stateLabel(s: Session): string {
  if (s.state === 'done' && s.outcome && s.outcome !== 'completed') return `done (${s.outcome})`;
  if (s.state === 'exited' && s.exit) {
    return s.exit.signal ? `exited (${s.exit.signal})` : s.exit.exitCode === 0 ? 'exited' : `exited (code ${s.exit.exitCode})`;
  }
  return s.state;
}

/** The row's name: the name given at spawn, else the agent's. */
export function sessionName(s: Session): string {
  return s.name || s.agent || s.sessionId;
}

/** A codicon per agent (the manifests' names). */
export function agentIcon(agent: string): string {
  switch (agent) {
    case 'claude':
      return 'sparkle';
    case 'codex':
      return 'hubot';
    case 'gemini':
      return 'star-empty';
    case 'opencode':
      return 'code';
    case 'shell':
      return 'terminal';
    case 'demo':
      return 'beaker';
    default:
      return 'robot';
  }
}

/**
 * Splits a typed command line into argv the way a POSIX shell would split
 * words (quotes and backslashes), without running a shell or expanding anything.
 */
export function splitCommandLine(line: string): string[] {
  const argv: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) argv.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in: ${line}`);
  if (inWord) argv.push(cur);
  return argv;
}

// A prompt's subject (what it asks to approve) is untrusted text: an agent,
// a model or a repository wrote it. agentd has stripped escapes and control
// characters; what follows makes it safe and readable where it lands.

/** How long a subject's line may be in a notification, a title or a row. */
export const MAX_SUBJECT_LINE = 160;

/** One line: runs of white space (newlines among them) as one space, cut at max characters with "…". */
export function oneLine(s: string, max = MAX_SUBJECT_LINE): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('').trimEnd()}…`;
}

/** A subject agentd saw but could not read ("other", no text): the person must look at the terminal. */
export function unreadable(sub: Subject | undefined): boolean {
  return !!sub && !sub.text.trim() && !sub.detail?.trim();
}

const SUBJECT_WORDS: Record<string, string> = {
  command: 'command',
  edit: 'edit',
  write: 'write',
  read: 'read',
  fetch: 'fetch',
  folder: 'folder',
  tool: 'tool',
};

/** `command: rm -rf build`, `edit: NOTES.md`, `… (cut)` when agentd could not see all of it; one bounded line. */
export function subjectLine(sub: Subject, max = MAX_SUBJECT_LINE): string {
  if (unreadable(sub)) return 'agentd could not read what it approves: see the terminal';
  const word = SUBJECT_WORDS[sub.kind];
  return `${word ? `${word}: ` : ''}${oneLine(sub.text || sub.detail || '', max)}${sub.truncated ? ' (cut)' : ''}`;
}

/**
 * The question and what it approves, on one line: "Do you want to proceed?
 * — command: rm -rf build". A question that names the subject already
 * (an ACP permission titled with its command) is left as it is.
 */
export function promptText(prompt: Prompt): string {
  const q = oneLine(prompt.question, 300);
  const sub = prompt.subject;
  if (!sub) return q;
  if (!unreadable(sub) && !sub.truncated && sub.text.trim() && q.includes(oneLine(sub.text, Infinity))) return q;
  const line = subjectLine(sub);
  return q ? `${q} — ${line}` : line;
}

/** What "Show …" opens for a subject: its diff, its whole command, its details; undefined when the line says it all. */
export type SubjectAction = 'Show Diff' | 'Show Command' | 'Show Details';

export function subjectAction(sub: Subject | undefined): SubjectAction | undefined {
  if (!sub || unreadable(sub)) return undefined;
  if ((sub.kind === 'edit' || sub.kind === 'write') && diffFiles(sub)) return 'Show Diff';
  const detail = sub.detail?.trim() ?? '';
  const more = (detail !== '' && oneLine(detail, Infinity) !== oneLine(sub.text, Infinity)) || [...sub.text].length > 100;
  if (!more) return undefined;
  return sub.kind === 'command' ? 'Show Command' : 'Show Details';
}

/** One file of a diff: its path where the diff names it, and the two sides. */
export interface DiffFile {
  path?: string;
  oldText: string;
  newText: string;
}

/**
 * A subject's change as old and new text, per file, for a diff editor; or
 * undefined when its detail has no change to show. The detail is a unified
 * diff ("--- a\n+++ b\n@@ … @@\n-old\n+new"), or rows as an agent drew them:
 * "-old"/"+new"/" context", each maybe after a line number ("2 -old"),
 * files maybe under "└ path (+1 -0)". A write whose detail has no change
 * rows is the new file's content.
 */
export function diffFiles(sub: Subject): DiffFile[] | undefined {
  const detail = sub.detail ?? '';
  if (!detail.trim()) return undefined;
  const files = splitDiff(detail);
  if (files) return files.map((f) => ({ ...f, path: f.path ?? (sub.text || undefined) }));
  if (sub.kind === 'write') return [{ path: sub.text || undefined, oldText: '', newText: withNewline(detail) }];
  return undefined;
}

const withNewline = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);

/** The gap between two hunks, on both sides: lines the diff leaves out. */
export const HUNK_GAP = '⋯';

/** Splits a diff's text into old and new per file; undefined when no row adds or removes. */
export function splitDiff(detail: string): DiffFile[] | undefined {
  const lines = detail.replace(/\r/g, '').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const unified = lines.some((l, i) => /^@@ .*@@/.test(l) || (/^--- \S/.test(l) && /^\+\+\+ \S/.test(lines[i + 1] ?? '')));
  return unified ? splitUnified(lines) : splitRows(lines);
}

interface Side {
  path?: string;
  old: string[];
  new: string[];
  hunks: number;
  changed: boolean;
}

function finish(files: Side[]): DiffFile[] | undefined {
  const kept = files.filter((f) => f.changed);
  if (kept.length === 0) return undefined;
  return kept.map((f) => ({ path: f.path, oldText: f.old.map((l) => `${l}\n`).join(''), newText: f.new.map((l) => `${l}\n`).join('') }));
}

/** "+++ b/src/x.go\t2024-…" → "src/x.go"; /dev/null → undefined. */
function headerPath(line: string): string | undefined {
  const p = line.slice(4).split('\t')[0].trim();
  if (p === '/dev/null' || p === '') return undefined;
  return p.replace(/^[ab]\//, '');
}

function splitUnified(lines: string[]): DiffFile[] | undefined {
  const files: Side[] = [];
  let cur: Side | undefined;
  let inHunk = false;
  const file = (path?: string) => {
    cur = { path, old: [], new: [], hunks: 0, changed: false };
    files.push(cur);
    inHunk = false;
    return cur;
  };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ')) {
      file(headerPath(lines[i + 1]) ?? headerPath(l));
      i++;
      continue;
    }
    if (/^@@ .*@@/.test(l)) {
      const f = cur ?? file();
      if (f.hunks++ > 0) {
        f.old.push(HUNK_GAP);
        f.new.push(HUNK_GAP);
      }
      inHunk = true;
      continue;
    }
    if (!inHunk || !cur) continue; // "diff --git", "index …" and the like before a hunk
    if (l.startsWith('\\')) continue; // "\ No newline at end of file"
    if (l.startsWith('+')) {
      cur.new.push(l.slice(1));
      cur.changed = true;
    } else if (l.startsWith('-')) {
      cur.old.push(l.slice(1));
      cur.changed = true;
    } else {
      const c = l.startsWith(' ') ? l.slice(1) : l;
      cur.old.push(c);
      cur.new.push(c);
    }
  }
  return finish(files);
}

/** Rows as an agent drew them: "-old", "+new", " context", maybe numbered ("12 -old"), maybe under "└ path (+1 -0)". */
function splitRows(lines: string[]): DiffFile[] | undefined {
  const numbered = lines.some((l) => /^\s*\d+ [-+]/.test(l));
  const files: Side[] = [];
  let cur: Side | undefined;
  for (const raw of lines) {
    const head = raw.match(/^\s*└\s+(\S.*?)\s+\(\+\d+ -\d+\)\s*$/);
    if (head) {
      cur = { path: head[1], old: [], new: [], hunks: 0, changed: false };
      files.push(cur);
      continue;
    }
    if (!cur) {
      cur = { old: [], new: [], hunks: 0, changed: false };
      files.push(cur);
    }
    let l = raw;
    if (numbered) {
      const m = l.match(/^\s*\d+ ?(.*)$/);
      if (m) l = m[1];
      else if (l.trim() === '') l = '';
    }
    if (l.startsWith('+')) {
      cur.new.push(l.slice(1));
      cur.changed = true;
    } else if (l.startsWith('-')) {
      cur.old.push(l.slice(1));
      cur.changed = true;
    } else {
      const c = l.startsWith(' ') ? l.slice(1) : l;
      cur.old.push(c);
      cur.new.push(c);
    }
  }
  // A blank row between two files' rows is the screen's, not the file's.
  for (const f of files) {
    while (f.old.length && f.new.length && f.old[f.old.length - 1] === '' && f.new[f.new.length - 1] === '') {
      f.old.pop();
      f.new.pop();
    }
  }
  return finish(files);
}

/** Escapes every character markdown gives a meaning (links, emphasis, code, HTML, entities, autolinks, theme icons). */
export function mdEscape(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>~&$:]/g, '\\$&');
}

/** A fenced code block that text cannot close: its fence is longer than any run of backticks in it. */
export function mdCodeBlock(code: string, lang = ''): string {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `\n${fence}${lang}\n${code}\n${fence}\n`;
}

/** Keeps `$(name)` in untrusted text from being drawn as an icon where VS Code renders labels with icons. */
export function escapeIcons(s: string): string {
  return s.replace(/\$\(/g, '\\$(');
}

/**
 * Keeps untrusted text in a notification from becoming a link: VS Code
 * turns "[label](https:…)" or "[label](command:…)" in a notification's
 * message into a link. A zero-width space between "]" and "(" leaves the
 * text as it reads and no link.
 */
export function noLinks(s: string): string {
  return s.replace(/\]\(/g, ']\u200b(');
}
