package acp_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/agentd/agentd/acp"
)

// Run Gemini CLI in ACP mode in a project folder, allow its first
// permission request, and print how the turn ended.
func Example() {
	ctx := context.Background()
	var c *acp.Client
	h := acp.HandlerFuncs{
		OnUpdate: func(u acp.Update) {
			// Forward u.Raw to the editor as session/update; u.Kind,
			// u.Text and u.ToolCall are there for agentd's own use.
			if u.Text != "" {
				fmt.Print(u.Text)
			}
		},
		OnPermission: func(p acp.Permission) {
			// The session is blocked: show p.Title and p.Options. Here
			// the first allow_once option is taken at once.
			for _, o := range p.Options {
				if o.Kind == "allow_once" {
					_ = c.Answer(p.Key, o.ID)
					return
				}
			}
		},
		OnPermissionSettled: func(s acp.Settled) {
			// Not blocked on s.Key any more (s.Reason says why).
		},
		OnExited: func(e acp.Exit) {
			fmt.Println("exited:", e.Code, e.Signal, e.Err)
		},
	}
	var err error
	c, err = acp.Start(ctx, acp.Options{
		Argv:              []string{"gemini", "--acp"},
		Cwd:               "/home/me/project",
		Handler:           h,
		Log:               slog.New(slog.NewTextHandler(os.Stderr, nil)),
		StartTimeout:      30 * time.Second,
		PermissionTimeout: 10 * time.Minute,
		FS:                true,                 // serve fs/* inside Cwd
		Terminals:         &acp.ExecTerminals{}, // serve terminal/*
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	stop, err := c.Prompt(ctx, "run the tests and fix what fails")
	if err != nil {
		fmt.Println("turn failed:", err)
		return
	}
	fmt.Println("\nturn ended:", stop, acp.Outcome(stop))
}
