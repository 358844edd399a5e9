// The commands of package.json "contributes.commands", one function each.
// A command run from the tree gets the row ({sessionId}); from the palette it
// asks which session when that is not obvious.
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

import { agentChoices, AgentChoice } from './agents';
import { isAgentdError } from './client';
import { Ctx, HostBundle } from './ctx';
import { age, agentIcon, escapeIcons, promptText, sessionName, splitCommandLine, stateLabel, subjectAction } from './format';
import { AuthMethod, AuthRequiredData, ErrorCodes, Session, SpawnParams } from './protocol';

type SessionArg = string | { sessionId: string; host?: string } | undefined;

function idOf(arg: SessionArg): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && typeof arg.sessionId === 'string') return arg.sessionId;
  return undefined;
}

/** The host a row names (several hosts); undefined: this machine. */
export function hostOf(arg: SessionArg): string | undefined {
  return arg && typeof arg === 'object' && typeof arg.host === 'string' ? arg.host : undefined;
}

/** What a command routes by: the hosts, this machine's first, and which one a name is. */
export type Hosts = Pick<Ctx, 'bundles' | 'bundle' | 'multi'>;

/** A session and the host it runs on: every action on it goes to that host's connection. */
export interface OnHost {
  s: Session;
  b: HostBundle;
}

/** A session's name, with its host when the window shows several. */
export function nameOn(ctx: Pick<Hosts, 'multi'>, x: OnHost): string {
  return ctx.multi ? `${sessionName(x.s)} on ${x.b.name}` : sessionName(x.s);
}

/** The blocked sessions of every host, waiting longest first. */
export function blockedOnHosts(ctx: Hosts): OnHost[] {
  const t = (s: Session) => {
    const n = Date.parse(s.since);
    return Number.isNaN(n) ? 0 : n;
  };
  return ctx
    .bundles()
    .flatMap((b) => b.store.blocked().map((s) => ({ s, b })))
    .sort((x, y) => t(x.s) - t(y.s));
}

/** "agentd: Answer Prompt" with several hosts: the row's session on its host, else the only blocked one, else a pick naming each host. */
export async function answerOnHosts(ctx: Hosts, arg: SessionArg): Promise<void> {
  const id = idOf(arg);
  if (id) {
    const b = ctx.bundle(hostOf(arg));
    if (!b) {
      void vscode.window.showInformationMessage(`Host ${hostOf(arg)} is not configured any more.`);
      return;
    }
    return b.prompts.answerPrompt(id);
  }
  const blocked = blockedOnHosts(ctx);
  if (blocked.length === 0) {
    void vscode.window.showInformationMessage('No agent is waiting on you.');
    return;
  }
  const one =
    blocked.length === 1
      ? blocked[0]
      : (
          await vscode.window.showQuickPick(
            blocked.map((x) => ({ label: nameOn(ctx, x), description: escapeIcons(x.s.prompt ? promptText(x.s.prompt) : ''), x })),
            { placeHolder: 'Which agent do you want to answer?' },
          )
        )?.x;
  if (one) await one.b.prompts.answerPrompt(one.s.sessionId);
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
    reg('agentd.answerPrompt', (arg?: SessionArg) => (ctx.multi ? answerOnHosts(ctx, arg) : ctx.prompts.answerPrompt(idOf(arg)))),
    reg('agentd.answerLongestWaiting', async () => {
      if (!ctx.multi) return ctx.prompts.answerLongestWaiting();
      const x = blockedOnHosts(ctx)[0];
      if (!x) return void (await vscode.commands.executeCommand('agentd.sessions.focus'));
      await x.b.prompts.answerPrompt(x.s.sessionId);
    }),
    reg('agentd.showSubject', async (arg?: SessionArg) => {
      const s = (await session(ctx, arg, (s) => s.state === 'blocked' && !!subjectAction(s.prompt?.subject), 'Show what which prompt approves?'))?.s;
      if (!s?.prompt || !subjectAction(s.prompt.subject)) {
        if (s) void vscode.window.showInformationMessage(`${sessionName(s)} is not waiting on a prompt with more to show${s.state === 'blocked' ? '' : ` (it is ${s.state})`}.`);
        return;
      }
      await ctx.subjects.show(sessionName(s), s.prompt);
    }),
    reg('agentd.openTerminal', async (arg?: SessionArg) => {
      const x = await session(ctx, arg, (s, b) => s.state !== 'exited' || b.terminals.has(s.sessionId), 'Open which session in a terminal?');
      if (!x) return;
      const s = x.s;
      if (s.agentInfo) {
        // An ACP session has no screen: its login's terminal, if it is
        // logging in; else say where its prompts and tasks go.
        const login = s.loginSessionId ? x.b.store.get(s.loginSessionId) : undefined;
        if (login) return void x.b.terminals.show(login);
        void vscode.window.showInformationMessage(
          `${sessionName(s)} runs over ACP and has no terminal: its permission requests come as notices, and "agentd: Send Selection to Agent" gives it a task.`,
        );
        return;
      }
      x.b.terminals.show(s);
    }),
    reg('agentd.markSeen', async (arg?: SessionArg) => {
      const x = await session(ctx, arg, (s) => s.state === 'done', 'Mark which finished session as seen?');
      if (x) await x.b.agentd.seen(x.s.sessionId);
    }),
    reg('agentd.killSession', async (arg?: SessionArg) => {
      const x = await session(ctx, arg, (s) => s.state !== 'exited', 'End which session? (its process group gets SIGHUP)', idOf(arg) === undefined);
      if (x) await x.b.agentd.kill({ sessionId: x.s.sessionId });
    }),
    reg('agentd.removeSession', (arg?: SessionArg) => {
      const id = idOf(arg);
      const b = ctx.bundle(hostOf(arg));
      if (id && b && b.store.get(id)?.state === 'exited') b.store.remove(id);
    }),
    reg('agentd.clearExited', () => ctx.bundles().reduce((n, b) => n + b.store.clearExited(), 0)),
    reg('agentd.sendSelection', () => sendSelection(ctx)),
    reg('agentd.refresh', () => (ctx.multi ? ctx.refreshAll() : ctx.refresh())),
    reg('agentd.restart', () => ctx.agentd.restart()),
    reg('agentd.stopDaemon', () => ctx.stopDaemon()),
    reg('agentd.showLog', () => ctx.output.show(true)),
    reg('agentd.showVersion', () => ctx.showVersion()),
  ];
}

/** The session a command is about, with its host: the argument, else the only candidate, else a pick. */
async function session(ctx: Hosts, arg: SessionArg, filter: (s: Session, b: HostBundle) => boolean, placeHolder: string, alwaysAsk = false): Promise<OnHost | undefined> {
  const id = idOf(arg);
  if (id) {
    const b = ctx.bundle(hostOf(arg));
    const s = b?.store.get(id);
    return b && s ? { s, b } : undefined;
  }
  const candidates = ctx.bundles().flatMap((b) => b.store.all().filter((s) => filter(s, b)).map((s) => ({ s, b })));
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage('No agent session fits. Start one with "agentd: New Agent Session".');
    return undefined;
  }
  if (candidates.length === 1 && !alwaysAsk) return candidates[0];
  const pick = await vscode.window.showQuickPick(
    candidates.map((x) => ({
      label: `$(${agentIcon(x.s.agent)}) ${nameOn(ctx, x)}`,
      description: `${stateLabel(x.s)} · ${age(x.s)}`,
      detail: x.s.state === 'blocked' && x.s.prompt ? escapeIcons(promptText(x.s.prompt)) : undefined,
      x,
    })),
    { placeHolder },
  );
  return pick?.x;
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

let lastTarget: { id: string; host: string } | undefined;

/** One machine's parts: its bundle, as a window with one host has. */
type OneHost = Pick<Ctx, 'store' | 'agentd' | 'prompts' | 'terminals' | 'config'>;

function hostsOf(ctx: (Hosts & Pick<Ctx, 'config'>) | OneHost): Hosts & Pick<Ctx, 'config'> {
  if ('bundles' in ctx) return ctx;
  const b: HostBundle = {
    name: 'local',
    local: true,
    agentd: ctx.agentd,
    store: ctx.store,
    prompts: ctx.prompts,
    terminals: ctx.terminals,
    markSeen: () => undefined,
    openTerminal: () => undefined,
  };
  return { bundles: () => [b], bundle: (h) => (h === undefined || h === b.name ? b : undefined), multi: false, config: ctx.config };
}

export async function sendSelection(c: (Hosts & Pick<Ctx, 'config'>) | OneHost): Promise<void> {
  const ctx = hostsOf(c);
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
  const active = vscode.window.activeTerminal;
  const fromTerminal = ctx
    .bundles()
    .map((b) => ({ id: b.terminals.sessionOf(active), host: b.name }))
    .find((t) => t.id !== undefined) as { id: string; host: string } | undefined;
  const onHost = (t: { id: string; host: string } | undefined): OnHost | undefined => {
    const b = t && ctx.bundle(t.host);
    const s = t && b?.store.get(t.id);
    return b && s ? { s, b } : undefined;
  };
  let target = [fromTerminal, lastTarget].map(onHost).find((x) => x && x.s.state !== 'exited');
  if (!target) target = await session(ctx, undefined, (s) => s.state !== 'exited', 'Send the selection to which agent?');
  if (!target) return;
  const { b } = target;
  lastTarget = { id: target.s.sessionId, host: b.name };
  try {
    await b.agentd.send({ sessionId: target.s.sessionId, text, submit: ctx.config.submitOnSend });
    vscode.window.setStatusBarMessage(`$(check) agentd: sent ${text.length} characters to ${nameOn(ctx, target)}`, 4000);
  } catch (e) {
    if (isAgentdError(e, ErrorCodes.SessionBlocked)) {
      const prompt = e.prompt ?? b.store.get(target.s.sessionId)?.prompt;
      if (prompt) {
        await b.prompts.showPrompt(target.s, prompt, 'is waiting on a prompt, so the text was not sent. It asks');
        return;
      }
    }
    throw e;
  }
}
