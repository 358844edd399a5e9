// Answering: the notice when an agent turns blocked (the question, what it
// approves, up to three option buttons and "Show Diff" or "Show Command"),
// the QuickPick of every option (and free text where the prompt takes it),
// and runtime_answer with its errors reported. Every text an agent wrote
// (question, subject, labels) is untrusted: one bounded line, no links in a
// notification, no icons in a label.
import * as vscode from 'vscode';

import { Agentd, isAgentdError } from './client';
import { Config } from './config';
import { escapeIcons, noLinks, oneLine, promptText, sessionName, subjectAction, subjectLine, unreadable } from './format';
import { ErrorCodes, Prompt, PromptOption, Session, StateNotification } from './protocol';
import { SessionStore } from './sessions';
import { SubjectDocs } from './subject_view';

/** What a person chose: an option, or free text. */
export type Answer = { optionId: string; label: string } | { text: string; label: string };

interface OptionButton extends vscode.MessageItem {
  optionId?: string;
  label?: string;
  more?: boolean;
  terminal?: boolean;
  /** "Show Diff", "Show Command" or "Show Details": opens what the prompt approves. */
  subject?: boolean;
}

interface AnswerItem extends vscode.QuickPickItem {
  answer: Answer;
}

interface SessionItem extends vscode.QuickPickItem {
  sessionId: string;
}

/** At most this many options become buttons on a notice. */
export const MAX_BUTTONS = 3;

/** Longer labels are cut on a button (a notice is narrow; the QuickPick shows them whole). */
export const MAX_BUTTON_LABEL = 22;

export function buttonLabel(label: string, max = MAX_BUTTON_LABEL): string {
  const flat = [...oneLine(label, Infinity)];
  if (flat.length <= max) return flat.join('');
  // Cut at a word's end where one is near, not mid-word ("No, and tell…").
  let cut = max - 1;
  if (flat[cut] !== ' ') {
    const space = flat.slice(0, cut).lastIndexOf(' ');
    if (space >= max / 2) cut = space;
  }
  return `${flat.slice(0, cut).join('').trimEnd()}…`;
}

/**
 * How long the longest button labels may be so that n buttons fit a
 * notice's row (VS Code squeezes them to "Y…" and "Show …" otherwise):
 * the labels share about 59 - 4n characters, short ones ("Yes", "Show
 * Diff") kept whole, the long ones cut alike.
 */
export function buttonLabelMax(labels: string[]): number {
  const budget = 59 - 4 * labels.length;
  const lengths = labels.map((l) => [...oneLine(l, Infinity)].length);
  let max = MAX_BUTTON_LABEL;
  while (max > 6 && lengths.reduce((sum, n) => sum + Math.min(n, max), 0) > budget) max--;
  return max;
}

export function optionIcon(o: PromptOption): string {
  if (o.kind === 'allow') return '$(pass) ';
  if (o.kind === 'reject') return '$(circle-slash) ';
  return '';
}

export class Prompts {
  /** The host these sessions run on, named in every notice and title when the window shows several hosts. */
  host: string | undefined;

  constructor(
    private readonly agentd: Agentd,
    private readonly store: SessionStore,
    private readonly config: () => Config,
    private readonly openTerminal: (sessionId: string) => void,
    private readonly subjects: Pick<SubjectDocs, 'show'>,
    host?: string,
  ) {
    this.host = host;
  }

  /** A session's name in one line, with its host when the window shows several. */
  private nameOf(s: Session | undefined, sessionId = ''): string {
    const name = oneLine(s ? sessionName(s) : sessionId, 80);
    return `${name}${this.at()}`;
  }

  /** " on HOST" when the window shows several hosts, else nothing. */
  private at(): string {
    return this.host ? ` on ${oneLine(this.host, 40)}` : '';
  }

  /** Pops a notice for a state change that carries `attention` (agentd rate-limits those). */
  onState(n: StateNotification): void {
    if (!n.attention) return;
    const s = this.store.get(n.sessionId);
    if (!s) return;
    const notify = this.config().notify;
    if (n.state === 'blocked' && n.prompt && notify.blocked) {
      void this.showPrompt(s, n.prompt, 'needs you');
    } else if (n.state === 'done' && notify.done) {
      const how = n.outcome && n.outcome !== 'completed' ? ` (${n.outcome})` : '';
      void vscode.window
        .showInformationMessage(`${sessionName(s)}${this.at()} finished its turn${how}.`, 'Open Terminal')
        .then((b) => b && this.openTerminal(s.sessionId));
    } else if (n.state === 'error' && notify.error) {
      // A terminal login in progress (acp.login) opens the login's terminal.
      const target = s.loginSessionId ?? s.sessionId;
      const text = n.message ? `${sessionName(s)}${this.at()}: ${n.message} (${n.reason})` : `${sessionName(s)}${this.at()} reports an error it cannot continue from (${n.reason}).`;
      void vscode.window.showErrorMessage(noLinks(text), 'Open Terminal').then((b) => b && this.openTerminal(target));
    }
  }

  /**
   * Shows the question and what it approves, with up to three option
   * buttons (and "More…" when there are more options or free text is
   * taken); "Show Diff" or "Show Command" when there is more to see than
   * the line; "Open Terminal" when agentd could not read what it approves.
   * A click answers; "Show …" opens it and shows the notice again.
   */
  async showPrompt(s: Session, prompt: Prompt, lead: string): Promise<void> {
    const buttons: OptionButton[] = prompt.options.slice(0, MAX_BUTTONS).map((o) => ({ title: o.label, optionId: o.id, label: o.label }));
    const hasTerminal = !s.agentInfo;
    if (prompt.options.length === 0) {
      // agentd sees a prompt it cannot read for sure: an answer typed by
      // the person, or the terminal; there is nothing to pick.
      if (prompt.freeform) buttons.push({ title: 'Reply…', more: true });
      buttons.push({ title: 'Open Terminal', terminal: true });
    } else if (prompt.options.length > MAX_BUTTONS || prompt.freeform) {
      buttons.push({ title: 'More…', more: true });
    }
    const action = subjectAction(prompt.subject);
    if (action) buttons.push({ title: action, subject: true });
    if (unreadable(prompt.subject) && hasTerminal && !buttons.some((b) => b.terminal)) buttons.push({ title: 'Open Terminal', terminal: true });
    const max = buttonLabelMax(buttons.map((b) => b.title));
    for (const b of buttons) b.title = buttonLabel(b.title, max);
    const pick = await vscode.window.showWarningMessage(noLinks(`${this.nameOf(s)} ${lead}: ${promptText(prompt)}`), ...buttons);
    if (!pick) return;
    if (pick.terminal) return this.openTerminal(s.sessionId);
    if (pick.subject) {
      await this.subjects.show(sessionName(s), prompt);
      // The notice closed with the click: it comes back while the same prompt waits.
      const now = this.store.get(s.sessionId);
      if (now?.state === 'blocked' && now.prompt?.promptId === prompt.promptId) return this.showPrompt(now, prompt, 'needs you');
      return;
    }
    if (pick.more || pick.optionId === undefined) return this.pick(s.sessionId, prompt);
    await this.submit(s.sessionId, prompt, { optionId: pick.optionId, label: pick.label ?? pick.title });
  }

  /**
   * "agentd: Answer Prompt": the given session, else the only blocked one,
   * else a choice among the blocked ones (waiting longest first).
   */
  async answerPrompt(sessionId?: string): Promise<void> {
    if (!sessionId) {
      const blocked = this.store.blocked();
      if (blocked.length === 0) {
        void vscode.window.showInformationMessage('No agent is waiting on you.');
        return;
      }
      sessionId = blocked.length === 1 ? blocked[0].sessionId : await this.pickBlocked(blocked);
      if (!sessionId) return;
    }
    const s = this.store.get(sessionId);
    if (!s || s.state !== 'blocked' || !s.prompt) {
      void vscode.window.showInformationMessage(`${s ? sessionName(s) : sessionId} is not waiting on a prompt${s ? ` (it is ${s.state})` : ''}.`);
      return;
    }
    await this.pick(sessionId, s.prompt);
  }

  /** The prompt waiting longest (the badge's click). */
  async answerLongestWaiting(): Promise<void> {
    const s = this.store.longestBlocked();
    if (!s) {
      await vscode.commands.executeCommand('agentd.sessions.focus');
      return;
    }
    await this.answerPrompt(s.sessionId);
  }

  private async pickBlocked(blocked: Session[]): Promise<string | undefined> {
    const items: SessionItem[] = blocked.map((s) => ({
      label: sessionName(s),
      description: escapeIcons(s.prompt ? promptText(s.prompt) : ''),
      sessionId: s.sessionId,
    }));
    const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Which agent do you want to answer?' });
    return pick?.sessionId;
  }

  /**
   * The QuickPick of every option, plus whatever is typed when the prompt
   * takes free text. Its title says what the prompt approves; a title
   * button opens it whole (the diff, the command) while the QuickPick stays.
   */
  pick(sessionId: string, prompt: Prompt): Promise<void> {
    const s = this.store.get(sessionId);
    const name = s ? sessionName(s) : sessionId;
    const qp = vscode.window.createQuickPick<AnswerItem>();
    // The title says what the prompt approves; it is plain text in VS Code (no icons, no links).
    qp.title = `${this.nameOf(s, sessionId)}: ${promptText(prompt)}`;
    qp.placeholder = prompt.freeform ? 'Pick an answer or type one; agentd types it for you' : 'Pick an answer; agentd types it for you';
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = true;
    const action = subjectAction(prompt.subject);
    const buttons: Array<vscode.QuickInputButton & { run: () => unknown }> = [];
    if (action) {
      const icon = action === 'Show Diff' ? 'diff' : action === 'Show Command' ? 'terminal' : 'go-to-file';
      buttons.push({ iconPath: new vscode.ThemeIcon(icon), tooltip: action, run: () => this.subjects.show(name, prompt) });
    }
    if (unreadable(prompt.subject) && !s?.agentInfo) {
      buttons.push({ iconPath: new vscode.ThemeIcon('terminal'), tooltip: 'Open Terminal: agentd could not read what it approves', run: () => this.openTerminal(sessionId) });
    }
    qp.buttons = buttons;
    qp.onDidTriggerButton((b) => void (b as (typeof buttons)[number]).run?.());
    const optionItems: AnswerItem[] = prompt.options.map((o) => ({
      label: `${optionIcon(o)}${escapeIcons(oneLine(o.label, 200))}`,
      description: o.description === undefined ? undefined : escapeIcons(oneLine(o.description, 200)),
      answer: { optionId: o.id, label: o.label },
    }));
    qp.items = optionItems;
    const selected = optionItems.find((_, i) => prompt.options[i].selected);
    if (selected) qp.activeItems = [selected];
    if (prompt.freeform) {
      qp.onDidChangeValue((v) => {
        const text = v.trim();
        qp.items = text ? [{ label: `$(comment) ${escapeIcons(text)}`, description: 'type this answer', alwaysShow: true, answer: { text, label: text } }, ...optionItems] : optionItems;
      });
    }
    return new Promise<void>((resolve) => {
      let chosen: Answer | undefined;
      qp.onDidAccept(() => {
        chosen = qp.selectedItems[0]?.answer ?? qp.activeItems[0]?.answer;
        qp.hide();
      });
      qp.onDidHide(() => {
        qp.dispose();
        if (!chosen) return resolve();
        void this.submit(sessionId, prompt, chosen).then(() => resolve());
      });
      qp.show();
    });
  }

  /** runtime_answer; every refusal is told to the person (a stale answer above all). */
  async submit(sessionId: string, prompt: Prompt, answer: Answer): Promise<boolean> {
    const s = this.store.get(sessionId);
    const name = this.nameOf(s, sessionId);
    const label = oneLine(answer.label, 80);
    const params = 'optionId' in answer ? { optionId: answer.optionId } : { text: answer.text };
    try {
      const r = await this.agentd.answer({ sessionId, promptId: prompt.promptId, ...params });
      // What was approved, echoed: the answer and the subject it was for.
      const what = prompt.subject && !unreadable(prompt.subject) ? ` to ${subjectLine(prompt.subject, 80)}` : '';
      vscode.window.setStatusBarMessage(`$(check) ${escapeIcons(`agentd: answered "${label}"${what}; ${name} is ${r.state}`)}`, 5000);
      return true;
    } catch (e) {
      if (isAgentdError(e, ErrorCodes.PromptStale)) {
        const now = e.prompt;
        if (now) {
          // The new prompt is told with what it approves: a different command under the same question is a different prompt.
          const again = await vscode.window.showWarningMessage(noLinks(`"${label}" not typed: ${name}'s prompt changed. It now asks: ${promptText(now)}`), 'Answer It');
          if (again) await this.pick(sessionId, now);
        } else {
          void vscode.window.showWarningMessage(noLinks(`"${label}" not typed: ${name}'s prompt is gone.`));
        }
      } else if (isAgentdError(e, ErrorCodes.AlreadyAnswered)) {
        void vscode.window.showInformationMessage(noLinks(`"${label}" not typed: ${name}'s prompt was already answered.`));
      } else if (isAgentdError(e, ErrorCodes.OptionUnknown) || isAgentdError(e, ErrorCodes.NotAnswerable)) {
        void vscode.window.showErrorMessage(noLinks(`${name}: agentd cannot type "${label}" (${(e as Error).message}). Answer in the terminal instead.`), 'Open Terminal').then(
          (b) => b && this.openTerminal(sessionId),
        );
      } else {
        void vscode.window.showErrorMessage(`${name}: the answer failed: ${(e as Error).message}`);
      }
      return false;
    }
  }
}
