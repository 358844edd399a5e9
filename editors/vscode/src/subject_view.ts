// What a prompt approves, opened whole: an edit's diff in VS Code's diff
// editor, a multi-line or long command, a fetch's prompt or a tool's
// arguments in a read-only document. The documents are virtual (scheme
// `agentd-subject`): nothing is written to disk, VS Code keeps them
// read-only, and their text is the agent's, shown as text.
import * as vscode from 'vscode';

import { diffFiles, oneLine, subjectAction } from './format';
import { Prompt } from './protocol';

export const SUBJECT_SCHEME = 'agentd-subject';

/** Documents kept for the diff and detail views; the oldest go first. */
const MAX_DOCS = 64;

/** The last path segment, as a file name whose extension picks the language; bounded. */
function fileName(path: string | undefined, fallback: string): string {
  const last = (path ?? '').split(/[\\/]/).filter(Boolean).pop() ?? '';
  const name = oneLine(last, 80).replace(/\s/g, '_');
  return name && name !== '.' && name !== '..' ? name : fallback;
}

export class SubjectDocs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly docs = new Map<string, string>();
  private seq = 0;
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SUBJECT_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? '(agentd no longer keeps this: answer from the notice, the QuickPick or the terminal)\n';
  }

  /** The text at a new read-only URI: /<n>/<side>/<name>, so the tab reads <name> and its extension picks the language. */
  private put(side: string, name: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: SUBJECT_SCHEME, path: `/${++this.seq}/${side}/${name}` });
    this.docs.set(uri.toString(), text);
    while (this.docs.size > MAX_DOCS) this.docs.delete(this.docs.keys().next().value as string);
    return uri;
  }

  /** The text a URI of this provider holds (for tests). */
  text(uri: { toString(): string }): string | undefined {
    return this.docs.get(uri.toString());
  }

  /**
   * Opens what the prompt approves: the diff editor for a change (one per
   * file), else the whole command or the details in a read-only editor.
   * `who` names the session in the titles.
   */
  async show(who: string, prompt: Prompt): Promise<void> {
    const sub = prompt.subject;
    const action = subjectAction(sub);
    if (!sub || !action) return;
    if (action === 'Show Diff') {
      const files = diffFiles(sub) ?? [];
      for (const [i, f] of files.entries()) {
        const name = fileName(f.path, 'change.txt');
        const left = this.put('before', name, f.oldText);
        const right = this.put(`${sub.kind === 'write' ? 'written' : 'edited'}`, name, f.newText);
        const title = `${name}: what ${oneLine(who, 60)} asks to ${sub.kind === 'write' ? 'write' : 'change'}${sub.truncated ? ' (cut)' : ''}`;
        await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: files.length === 1, preserveFocus: i > 0 });
      }
      return;
    }
    const name = action === 'Show Command' ? 'command.sh' : `${sub.kind}.txt`;
    const body = sub.detail?.trim() ? sub.detail : sub.text;
    const note = sub.truncated ? '# (cut: agentd could not see all of it; the terminal shows what the agent shows)\n' : '';
    const doc = await vscode.workspace.openTextDocument(this.put(sub.kind, name, `${body.endsWith('\n') ? body : `${body}\n`}${note}`));
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  dispose(): void {
    this.registration.dispose();
    this.docs.clear();
  }
}
