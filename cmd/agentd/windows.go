//go:build !unix

// agentd hosts agents in pseudo-terminals and process groups, which only
// Unix has. On Windows, run agentd inside WSL: VS Code's WSL window and
// Neovim in WSL start it there (docs/platforms.md).
package main

var _ = agentd_runs_on_Linux_and_macOS__on_Windows_run_it_inside_WSL
