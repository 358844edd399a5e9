// Words and icons for what a person sees: the badge text, durations, state
// labels, agent icons, and splitting a typed command line. Pure functions;
// nothing here imports `vscode`.
import { Counts } from './sessions';
import { Prompt, Session, StateName } from './protocol';

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

/**
 * The question, with what an ACP permission is about when the question
 * does not already say it ("Allow?" twice reads the same; the command or
 * path tells them apart).
 */
export function promptText(prompt: Prompt): string {
  const input = prompt.tool?.input;
  if (!input || prompt.question.includes(input)) return prompt.question;
  const kind = prompt.tool?.kind && prompt.tool.kind !== 'other' ? `${prompt.tool.kind}: ` : '';
  return prompt.question ? `${prompt.question} (${kind}${input})` : `${kind}${input}`;
}
