// Entry point: builds the Ctx, registers the commands, starts agentd.
import * as vscode from 'vscode';

import { registerCommands } from './commands';
import { Ctx } from './ctx';

let ctx: Ctx | undefined;

export async function activate(ext: vscode.ExtensionContext): Promise<void> {
  ctx = new Ctx(ext);
  ext.subscriptions.push(...registerCommands(ctx));
  // Not awaited: activation must not wait on agentd; the badge shows how it goes.
  void ctx.start();
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
