// Answering: the notice when an agent turns blocked (the question and up to
// three option buttons), the QuickPick of every option (and free text where
// the prompt takes it), and runtime_answer with its errors reported.
import * as vscode from 'vscode';

import { Agentd, isAgentdError } from './client';
import { Config } from './config';
import { promptText, sessionName } from './format';
import { ErrorCodes, Prompt, PromptOption, Session, StateNotification } from './protocol';
import { SessionStore } from './sessions';

/** What a person chose: an option, or free text. */
export type Answer = { optionId: string; label: string } | { text: string; label: string };

interface OptionButton extends vscode.MessageItem {
  optionId?: string;
  label?: string;
  more?: boolean;
  terminal?: boolean;
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

export function buttonLabel(label: string): string {
  return label.length <= MAX_BUTTON_LABEL ? label : `${label.slice(0, MAX_BUTTON_LABEL - 1).trimEnd()}…`;
}

export function optionIcon(o: PromptOption): string {
  if (o.kind === 'allow') return '$(pass) ';
  if (o.kind === 'reject') return '$(circle-slash) ';
  return '';
}

export class Prompts {
  constructor(
    private readonly agentd: Agentd,
    private readonly store: SessionStore,
    private readonly config: () => Config,
    private readonly openTerminal: (sessionId: string) => void,
  ) {}

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
        .showInformationMessage(`${sessionName(s)} finished its turn${how}.`, 'Open Terminal')
        .then((b) => b && this.openTerminal(s.sessionId));
    } else if (n.state === 'error' && notify.error) {
      // A terminal login in progress (acp.login) opens the login's terminal.
      const target = s.loginSessionId ?? s.sessionId;
      const text = n.message ? `${sessionName(s)}: ${n.message} (${n.reason})` : `${sessionName(s)} reports an error it cannot continue from (${n.reason}).`;
      void vscode.window.showErrorMessage(text, 'Open Terminal').then((b) => b && this.openTerminal(target));
    }
  }

  /**
   * Shows the question with up to three option buttons (and "More…" when
   * there are more options or free text is taken); a click answers.
   */
  async showPrompt(s: Session, prompt: Prompt, lead: string): Promise<void> {
    const buttons: OptionButton[] = prompt.options.slice(0, MAX_BUTTONS).map((o) => ({ title: buttonLabel(o.label), optionId: o.id, label: o.label }));
    if (prompt.options.length === 0) {
      // agentd sees a prompt it cannot read for sure: an answer typed by
      // the person, or the terminal; there is nothing to pick.
      if (prompt.freeform) buttons.push({ title: 'Reply…', more: true });
      buttons.push({ title: 'Open Terminal', terminal: true });
    } else if (prompt.options.length > MAX_BUTTONS || prompt.freeform) {
      buttons.push({ title: 'More…', more: true });
    }
    const pick = await vscode.window.showWarningMessage(`${sessionName(s)} ${lead}: ${promptText(prompt)}`, ...buttons);
    if (!pick) return;
    if (pick.terminal) return this.openTerminal(s.sessionId);
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
      description: s.prompt?.question ?? '',
      sessionId: s.sessionId,
    }));
    const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Which agent do you want to answer?' });
    return pick?.sessionId;
  }

  /** The QuickPick of every option, plus whatever is typed when the prompt takes free text. */
  pick(sessionId: string, prompt: Prompt): Promise<void> {
    const s = this.store.get(sessionId);
    const name = s ? sessionName(s) : sessionId;
    const qp = vscode.window.createQuickPick<AnswerItem>();
    qp.title = `${name}: ${promptText(prompt)}`;
    qp.placeholder = prompt.freeform ? 'Pick an answer or type one; agentd types it for you' : 'Pick an answer; agentd types it for you';
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = true;
    const optionItems: AnswerItem[] = prompt.options.map((o) => ({
      label: `${optionIcon(o)}${o.label}`,
      description: o.description,
      answer: { optionId: o.id, label: o.label },
    }));
    qp.items = optionItems;
    const selected = optionItems.find((_, i) => prompt.options[i].selected);
    if (selected) qp.activeItems = [selected];
    if (prompt.freeform) {
      qp.onDidChangeValue((v) => {
        const text = v.trim();
        qp.items = text ? [{ label: `$(comment) ${text}`, description: 'type this answer', alwaysShow: true, answer: { text, label: text } }, ...optionItems] : optionItems;
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
    const name = s ? sessionName(s) : sessionId;
    const params = 'optionId' in answer ? { optionId: answer.optionId } : { text: answer.text };
    try {
      const r = await this.agentd.answer({ sessionId, promptId: prompt.promptId, ...params });
      vscode.window.setStatusBarMessage(`$(check) agentd: answered "${answer.label}"; ${name} is ${r.state}`, 5000);
      return true;
    } catch (e) {
      if (isAgentdError(e, ErrorCodes.PromptStale)) {
        const now = e.prompt;
        if (now) {
          const again = await vscode.window.showWarningMessage(`"${answer.label}" not typed: ${name}'s prompt changed. It now asks: ${now.question}`, 'Answer It');
          if (again) await this.pick(sessionId, now);
        } else {
          void vscode.window.showWarningMessage(`"${answer.label}" not typed: ${name}'s prompt is gone.`);
        }
      } else if (isAgentdError(e, ErrorCodes.AlreadyAnswered)) {
        void vscode.window.showInformationMessage(`"${answer.label}" not typed: ${name}'s prompt was already answered.`);
      } else if (isAgentdError(e, ErrorCodes.OptionUnknown) || isAgentdError(e, ErrorCodes.NotAnswerable)) {
        void vscode.window.showErrorMessage(`${name}: agentd cannot type "${answer.label}" (${(e as Error).message}). Answer in the terminal instead.`, 'Open Terminal').then(
          (b) => b && this.openTerminal(sessionId),
        );
      } else {
        void vscode.window.showErrorMessage(`${name}: the answer failed: ${(e as Error).message}`);
      }
      return false;
    }
  }
}
