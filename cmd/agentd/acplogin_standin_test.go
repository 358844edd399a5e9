package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// acpLoginStandIn is a stand-in ACP agent that needs a terminal login,
// labelled as such: no real agent logs in offline here (the real Copilot
// CLI refuses and its "copilot login" needs github.com; see
// TestCopilotACPNeedsLogin). It offers ACP's "terminal" auth method, which
// runs its own program with args ["login"]: that asks "Log in? [y/N]" and,
// on "y", writes a token to $STANDIN_HOME/token and exits 0. session/new
// answers auth_required until the token is there.
func acpLoginStandIn() {
	token := filepath.Join(os.Getenv("STANDIN_HOME"), "token")
	if len(os.Args) > 1 && os.Args[1] == "login" {
		fmt.Print("Stand-in login. Log in? [y/N] ")
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if len(line) == 0 || line[0] != 'y' {
			fmt.Println("not logged in")
			os.Exit(1)
		}
		if err := os.WriteFile(token, []byte("ok"), 0o600); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Println("logged in")
		return
	}
	in := json.NewDecoder(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	reply := func(id json.RawMessage, result any) {
		_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	for {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if in.Decode(&msg) != nil {
			return
		}
		switch msg.Method {
		case "initialize":
			reply(msg.ID, map[string]any{
				"protocolVersion": 1,
				"agentInfo":       map[string]any{"name": "standin", "title": "Stand-in Agent", "version": "0.0.0"},
				"authMethods": []any{map[string]any{"id": "standin-login", "name": "Log in in a terminal",
					"description": "Runs the stand-in's login", "type": "terminal", "args": []string{"login"}}},
			})
		case "authenticate":
			reply(msg.ID, map[string]any{})
		case "session/new":
			if _, err := os.Stat(token); err != nil {
				_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32000, "message": "Authentication required"}})
				continue
			}
			reply(msg.ID, map[string]any{"sessionId": "standin-1"})
		case "session/prompt":
			reply(msg.ID, map[string]any{"stopReason": "end_turn"})
		default:
			if len(msg.ID) > 0 {
				_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
}
