// The agents "agentd: New Agent Session" offers, built from the settings.
// Nothing here imports `vscode`.

/** A command from `agentd.agents.custom`. */
export interface CustomAgent {
  name: string;
  command: string[];
  /** The agentd manifest to use (e.g. "claude"); agentd guesses from argv when absent. */
  agent?: string;
  env?: Record<string, string>;
  /** "acp": the agent speaks the Agent Client Protocol (no terminal). */
  protocol?: 'pty' | 'acp';
}

/** An agent run over ACP (`agentd.agents.acp`). */
export interface ACPAgent {
  name: string;
  command: string[];
  env?: Record<string, string>;
}

/** The ACP agents offered by default: each one's own ACP command. */
export const DEFAULT_ACP_AGENTS: ACPAgent[] = [
  { name: 'Claude Code (ACP)', command: ['claude-agent-acp'] },
  { name: 'Codex (ACP)', command: ['codex-acp'] },
  { name: 'Gemini CLI (ACP)', command: ['gemini', '--acp'] },
  { name: 'Copilot (ACP)', command: ['copilot', '--acp'] },
  { name: 'Qwen Code (ACP)', command: ['qwen', '--acp'] },
  { name: 'OpenCode (ACP)', command: ['opencode', 'acp'] },
];

/** The commands configured for each agent (`agentd.agents.*`). */
export interface AgentCommands {
  claudeCode: string[];
  codex: string[];
  gemini: string[];
  opencode: string[];
  /** Empty means the user's login shell ($SHELL, else /bin/sh). */
  shell: string[];
  custom: CustomAgent[];
  acp: ACPAgent[];
}

export interface AgentChoice {
  label: string;
  /** The manifest name passed as `agent`, when known. */
  agent?: string;
  argv: string[];
  env?: Record<string, string>;
  /** A codicon for the picker and the terminal. */
  icon: string;
  /** "acp": spawned with protocol acp, with no terminal. */
  protocol?: 'pty' | 'acp';
}

export function agentChoices(cmds: AgentCommands, shell = process.env.SHELL): AgentChoice[] {
  const builtins: AgentChoice[] = [
    { label: 'Claude Code', agent: 'claude', argv: cmds.claudeCode, icon: 'sparkle' },
    { label: 'Codex', agent: 'codex', argv: cmds.codex, icon: 'hubot' },
    { label: 'Gemini CLI', agent: 'gemini', argv: cmds.gemini, icon: 'star-empty' },
    { label: 'OpenCode', agent: 'opencode', argv: cmds.opencode, icon: 'code' },
    { label: 'Shell', agent: 'shell', argv: cmds.shell.length ? cmds.shell : [shell || '/bin/sh'], icon: 'terminal' },
  ].filter((c) => c.argv.length > 0);
  const custom = cmds.custom
    .filter((c) => c && typeof c.name === 'string' && Array.isArray(c.command) && c.command.length > 0)
    .map((c): AgentChoice => ({ label: c.name, agent: c.agent || undefined, argv: c.command, env: c.env, icon: 'robot', protocol: c.protocol === 'acp' ? 'acp' : undefined }));
  const acp = (cmds.acp ?? [])
    .filter((c) => c && typeof c.name === 'string' && Array.isArray(c.command) && c.command.length > 0)
    .map((c): AgentChoice => ({ label: c.name, argv: c.command, env: c.env, icon: 'plug', protocol: 'acp' }));
  return [...builtins, ...custom, ...acp];
}
