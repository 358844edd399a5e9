// The agents "agentd: New Agent Session" offers, built from the settings.
// Nothing here imports `vscode`.

/** A command from `agentd.agents.custom`. */
export interface CustomAgent {
  name: string;
  command: string[];
  /** The agentd manifest to use (e.g. "claude"); agentd guesses from argv when absent. */
  agent?: string;
  env?: Record<string, string>;
}

/** The commands configured for each agent (`agentd.agents.*`). */
export interface AgentCommands {
  claudeCode: string[];
  codex: string[];
  gemini: string[];
  opencode: string[];
  /** Empty means the user's login shell ($SHELL, else /bin/sh). */
  shell: string[];
  custom: CustomAgent[];
}

export interface AgentChoice {
  label: string;
  /** The manifest name passed as `agent`, when known. */
  agent?: string;
  argv: string[];
  env?: Record<string, string>;
  /** A codicon for the picker and the terminal. */
  icon: string;
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
    .map((c): AgentChoice => ({ label: c.name, agent: c.agent || undefined, argv: c.command, env: c.env, icon: 'robot' }));
  return [...builtins, ...custom];
}
