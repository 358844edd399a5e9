// Reads the `agentd.*` settings (package.json "contributes.configuration").
import * as vscode from 'vscode';

import { ACPAgent, AgentCommands, CustomAgent, DEFAULT_ACP_AGENTS } from './agents';
import { splitStdio } from './startfail';

export interface Config {
  /** The agentd.path setting (without --stdio); "" when unset: the bundled agentd, else agentd on PATH (locate.ts). */
  path: string;
  /** Arguments the path setting had after --stdio (it should have none). */
  pathArgs: string[];
  /** Says the right form of a path setting that had --stdio in it. */
  pathNote?: string;
  /** Passed as `--cooldown`, e.g. "30s". */
  cooldown: string;
  trace: 'off' | 'messages' | 'verbose';
  agents: AgentCommands;
  notify: { blocked: boolean; done: boolean; error: boolean };
  /** agentd.desktopNotifications: OS notices from agentd while no editor is focused. */
  desktopNotifications: boolean;
  openTerminalOnStart: boolean;
  submitOnSend: boolean;
  /** `--private`: this window's own agentd, whose sessions end with the window. */
  private: boolean;
}

const COOLDOWN = /^\d+(\.\d+)?(ms|s|m|h)$/;

export function readConfig(): Config {
  const c = vscode.workspace.getConfiguration('agentd');
  const strings = (key: string, dflt: string[]): string[] => {
    const v = c.get<unknown>(key);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : dflt;
  };
  const cooldown = (c.get<string>('cooldown') ?? '').trim();
  const path = splitStdio((c.get<string>('path') ?? '').trim());
  return {
    path: path.path,
    pathArgs: path.args,
    pathNote: path.note,
    cooldown: COOLDOWN.test(cooldown) ? cooldown : '30s',
    trace: c.get<'off' | 'messages' | 'verbose'>('trace.server') ?? 'off',
    agents: {
      claudeCode: strings('agents.claudeCode', ['claude']),
      codex: strings('agents.codex', ['codex']),
      gemini: strings('agents.gemini', ['gemini']),
      opencode: strings('agents.opencode', ['opencode']),
      shell: strings('agents.shell', []),
      custom: c.get<CustomAgent[]>('agents.custom') ?? [],
      acp: c.get<ACPAgent[]>('agents.acp') ?? DEFAULT_ACP_AGENTS,
    },
    notify: {
      blocked: c.get<boolean>('notifications.blocked') ?? true,
      done: c.get<boolean>('notifications.done') ?? true,
      error: c.get<boolean>('notifications.error') ?? true,
    },
    desktopNotifications: c.get<boolean>('desktopNotifications') ?? true,
    openTerminalOnStart: c.get<boolean>('terminal.openOnStart') ?? true,
    submitOnSend: c.get<boolean>('send.submit') ?? true,
    private: (c.get<boolean>('private') ?? false) || path.private,
  };
}

/** Settings that only take effect when agentd is started again. */
export function needsRestart(e: vscode.ConfigurationChangeEvent): boolean {
  return ['agentd.path', 'agentd.cooldown', 'agentd.trace.server', 'agentd.private'].some((k) => e.affectsConfiguration(k));
}
