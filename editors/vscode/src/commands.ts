// The commands of package.json "contributes.commands", one function each.
// A command run from the tree gets the row ({sessionId}); from the palette it
// asks which session when that is not obvious.
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

import { agentChoices, AgentChoice } from './agents';
import { isAgentdError } from './client';
import { Ctx } from './ctx';
import { age, agentIcon, escapeIcons, promptText, sessionName, splitCommandLine, stateLabel, subjectAction } from './format';
import { AuthMethod, AuthRequiredData, ErrorCodes, Session, SpawnParams } from './protocol';

type SessionArg = string | { sessionId: string } | undefined;

function idOf(arg: SessionArg): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && typeof arg.sessionId === 'string') return arg.sessionId;
  return undefined;
}

export function registerCommands(ctx: Ctx): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: any[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: any[]) => {
      try {
        await fn(...args);
      } catch (e) {
        ctx.log(`[client] ${id}: ${(e as Error).message}`);
        void vscode.window.showErrorMessage(`${(e as Error).message}`);
      }
    });
  return [
    reg('agentd.newSession', () => newSession(ctx)),
    reg('agentd.answerPrompt', (arg?: SessionArg) => ctx.prompts.answerPrompt(idOf(arg))),
    reg('agentd.answerLongestWaiting', () => ctx.prompts.answerLongestWaiting()),
    reg('agentd.showSubject', async (arg?: SessionArg) => {
      const s = await session(ctx, arg, (s) => s.state === 'blocked' && !!subjectAction(s.prompt?.subject), 'Show what which prompt approves?');
      if (!s?.prompt || !subjectAction(s.prompt.subject)) {
        if (s) void vscode.window.showInformationMessage(`${sessionName(s)} is not waiting on a prompt with more to show${s.state === 'blocked' ? '' : ` (it is ${s.state})`}.`);
        return;
      }
      await ctx.subjects.show(sessionName(s), s.prompt);
    }),
    reg('agentd.openTerminal', async (arg?: SessionArg) => {
      const s = await session(ctx, arg, (s) => s.state !== 'exited' || ctx.terminals.has(s.sessionId), 'Open which session in a terminal?');
      if (!s) return;
      if (s.agentInfo) {
        // An ACP session has no screen: its login's terminal, if it is
        // logging in; else say where its prompts and tasks go.
        const login = s.loginSessionId ? ctx.store.get(s.loginSessionId) : undefined;
        if (login) return void ctx.terminals.show(login);
        void vscode.window.showInformationMessage(
          `${sessionName(s)} runs over ACP and has no terminal: its permission requests come as notices, and "agentd: Send Selection to Agent" gives it a task.`,
        );
        return;
      }
      ctx.terminals.show(s);
    }),
    reg('agentd.markSeen', async (arg?: SessionArg) => {
      const s = await session(ctx, arg, (s) => s.state === 'done', 'Mark which finished session as seen?');
      if (s) await ctx.agentd.seen(s.sessionId);
    }),
    reg('agentd.killSession', async (arg?: SessionArg) => {
      const s = await session(ctx, arg, (s) => s.state !== 'exited', 'End which session? (its process group gets SIGHUP)', idOf(arg) === undefined);
      if (s) await ctx.agentd.kill({ sessionId: s.sessionId });
    }),
    reg('agentd.removeSession', (arg?: SessionArg) => {
      const id = idOf(arg);
      if (id && ctx.store.get(id)?.state === 'exited') ctx.store.remove(id);
    }),
    reg('agentd.clearExited', () => ctx.store.clearExited()),
    reg('agentd.sendSelection', () => sendSelection(ctx)),
    reg('agentd.refresh', () => ctx.refresh()),
    reg('agentd.restart', () => ctx.agentd.restart()),
    reg('agentd.stopDaemon', () => ctx.stopDaemon()),
    reg('agentd.showLog', () => ctx.output.show(true)),
    reg('agentd.showVersion', () => ctx.showVersion()),
  ];
}

/** The session a command is about: the argument, else the only candidate, else a pick. */
async function session(ctx: Pick<Ctx, 'store'>, arg: SessionArg, filter: (s: Session) => boolean, placeHolder: string, alwaysAsk = false): Promise<Session | undefined> {
  const id = idOf(arg);
  if (id) return ctx.store.get(id);
  const candidates = ctx.store.all().filter(filter);
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage('No agent session fits. Start one with "agentd: New Agent Session".');
    return undefined;
  }
  if (candidates.length === 1 && !alwaysAsk) return candidates[0];
  const pick = await vscode.window.showQuickPick(
    candidates.map((s) => ({
      label: `$(${agentIcon(s.agent)}) ${sessionName(s)}`,
      description: `${stateLabel(s)} · ${age(s)}`,
      detail: s.state === 'blocked' && s.prompt ? escapeIcons(promptText(s.prompt)) : undefined,
      s,
    })),
    { placeHolder },
  );
  return pick?.s;
}

function workspaceCwd(): string {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const active = vscode.window.activeTextEditor?.document.uri;
  const owner = active ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  return (owner ?? folders[0])?.uri.fsPath ?? os.homedir();
}

/** "Claude Code", then "Claude Code 2", … while earlier ones are still listed. */
function uniqueName(ctx: Ctx, base: string): string {
  const taken = new Set(ctx.store.all().map((s) => s.name));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base} ${i}`)) return `${base} ${i}`;
}

async function newSession(ctx: Ctx): Promise<void> {
  const choices = agentChoices(ctx.config.agents);
  type Item = vscode.QuickPickItem & { choice?: AgentChoice };
  const items: Item[] = [
    ...choices.map((c) => ({ label: `$(${c.icon}) ${c.label}`, description: c.argv.join(' '), choice: c })),
    { label: '$(edit) Custom command…', description: 'type a command line to run in a new session' },
  ];
  const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Start which agent? (it runs in the workspace folder, hosted by agentd)' });
  if (!pick) return;
  let choice = pick.choice;
  if (!choice) {
    const line = await vscode.window.showInputBox({
      prompt: 'Command to run in a new agentd session (not through a shell; quotes group words)',
      placeHolder: 'e.g. claude --model opus',
      validateInput: (v) => {
        try {
          return splitCommandLine(v).length ? undefined : 'Type a command';
        } catch (e) {
          return (e as Error).message;
        }
      },
    });
    if (!line) return;
    const argv = splitCommandLine(line);
    choice = { label: path.basename(argv[0]), argv, icon: 'robot' };
  }
  const known = ctx.knownAgents();
  const cwd = workspaceCwd();
  const params: SpawnParams = {
    argv: choice.argv,
    cwd,
    env: choice.env,
    // Named only when agentd has rules by that name; otherwise it tells from argv.
    agent: choice.agent && known.has(choice.agent) ? choice.agent : undefined,
    name: uniqueName(ctx, choice.label),
  };
  if (choice.protocol === 'acp') {
    // An ACP agent has no screen: no terminal. It names itself (agentInfo).
    params.protocol = 'acp';
    params.name = undefined;
  }
  try {
    // With a terminal, the session starts at the terminal's size.
    const s = ctx.config.openTerminalOnStart && choice.protocol !== 'acp' ? await ctx.terminals.spawn(params, choice.icon) : await ctx.agentd.spawn(params);
    ctx.store.upsert(s);
    ctx.log(`[client] started ${s.sessionId} (${s.agent}, ${s.cols}x${s.rows}): ${choice.argv.join(' ')} in ${cwd}`);
  } catch (e) {
    if (isAgentdError(e, ErrorCodes.AuthRequired)) {
      await logIn(ctx, params, choice.label, e.data as AuthRequiredData);
      return;
    }
    if (isAgentdError(e, ErrorCodes.SpawnFailed)) {
      const b = await vscode.window.showErrorMessage(`Could not start ${choice.label}: ${(e as Error).message}`, 'Open Settings');
      if (b) await vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.agents');
      return;
    }
    throw e;
  }
}

interface MethodButton extends vscode.MessageItem {
  method: AuthMethod;
}

/**
 * An ACP agent that will not start before a login: its methods become the
 * notice's buttons. A terminal method runs as a session of its own (agentd
 * runs the command the agent named), shown in a terminal; the agent starts
 * when the login ends well. An env_var method names what to set.
 */
export async function logIn(ctx: Pick<Ctx, 'agentd' | 'store' | 'terminals' | 'log'>, params: SpawnParams, label: string, data: AuthRequiredData | undefined): Promise<Session | undefined> {
  const who = data?.agentInfo?.title || data?.agentInfo?.name || label;
  const methods = data?.authMethods ?? [];
  if (methods.length === 0) {
    void vscode.window.showErrorMessage(`${who} needs you to log in (${data?.message ?? 'authentication required'}), and offers no way to from here.`);
    return undefined;
  }
  const buttons: MethodButton[] = methods.map((m) => ({ title: m.name || m.id, method: m }));
  const pick = await vscode.window.showWarningMessage(`${who} needs you to log in: ${data?.message ?? ''}`.trim(), ...buttons);
  if (!pick) return undefined;
  const m = pick.method;
  if (m.type === 'env_var') {
    void vscode.window.showInformationMessage(`${who}: set ${(m.vars ?? []).join(', ')} in this agent's env (agentd.agents.acp), then start it again.`);
    return undefined;
  }
  const s = await ctx.agentd.spawn({ ...params, authMethod: m.id });
  ctx.store.upsert(s);
  ctx.log(`[client] ${s.sessionId} (${who}) logs in with ${m.id}${s.loginSessionId ? ` in ${s.loginSessionId}` : ''}`);
  if (s.loginSessionId) {
    const login = (await ctx.agentd.list()).find((x) => x.sessionId === s.loginSessionId);
    if (login) {
      ctx.store.upsert(login);
      ctx.terminals.show(login);
    }
  }
  return s;
}

let lastTarget: string | undefined;

export async function sendSelection(ctx: Pick<Ctx, 'store' | 'agentd' | 'prompts' | 'terminals' | 'config'>): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Open a file and select the text to send to an agent.');
    return;
  }
  const sel = editor.selection;
  const text = sel.isEmpty ? editor.document.lineAt(sel.active.line).text : editor.document.getText(sel);
  if (!text.trim()) {
    void vscode.window.showInformationMessage('Nothing to send: select some text first.');
    return;
  }
  // The agent whose terminal is active, else the one sent to last, else ask.
  const fromTerminal = ctx.terminals.sessionOf(vscode.window.activeTerminal);
  let target = [fromTerminal, lastTarget].map((id) => id && ctx.store.get(id)).find((s) => s && s.state !== 'exited');
  if (!target) target = await session(ctx, undefined, (s) => s.state !== 'exited', 'Send the selection to which agent?');
  if (!target) return;
  lastTarget = target.sessionId;
  try {
    await ctx.agentd.send({ sessionId: target.sessionId, text, submit: ctx.config.submitOnSend });
    vscode.window.setStatusBarMessage(`$(check) agentd: sent ${text.length} characters to ${sessionName(target)}`, 4000);
  } catch (e) {
    if (isAgentdError(e, ErrorCodes.SessionBlocked)) {
      const prompt = e.prompt ?? ctx.store.get(target.sessionId)?.prompt;
      if (prompt) {
        await ctx.prompts.showPrompt(target, prompt, 'is waiting on a prompt, so the text was not sent. It asks');
        return;
      }
    }
    throw e;
  }
}
