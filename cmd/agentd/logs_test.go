package main

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for agentd's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// agentd's log (the file, and stderr with --verbose) holds what agentd did
// — sessions started, reports, errors — never what was on a screen, what
// a prompt asked, what was typed or sent, the argv a session started with,
// or an environment value: none of that is logged without --debug.
func TestLogsHoldNoScreenPromptOrEnvironment(t *testing.T) {
	const (
		secret   = "canary-env-5f1c2b"    // an environment value
		argvText = "canary-argv-9d3e77"   // in a session's argv
		question = "Launch canary-q-71ab" // a prompt's question
		typed    = "canary-typed-0c4d"    // typed with session/input
		sent     = "canary-sent-e2f9"     // sent with runtime_send
	)
	var stderr syncBuffer
	a := startRawStderr(t, &stderr, "--verbose")
	from := 0
	env := map[string]any{"AGENTD_SECRET_CANARY": secret}
	// The demo agent through a whole turn: a task, its permission prompt, an answer.
	var demo spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent", argvText}, "cwd": t.TempDir(), "env": env, "cols": 100, "rows": 30}, &demo)
	a.waitState(demo.SessionID, &from, 30*time.Second, "idle", func(s stateNote) bool { return s.State == "idle" })
	a.mustCall("runtime_send", map[string]any{"sessionId": demo.SessionID, "text": sent, "submit": true}, nil)
	b := a.waitState(demo.SessionID, &from, 30*time.Second, "blocked with options", func(s stateNote) bool {
		return s.State == "blocked" && s.Prompt != nil && len(s.Prompt.Options) > 0
	})
	a.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	a.waitState(demo.SessionID, &from, 30*time.Second, "done", func(s stateNote) bool { return s.State == "done" })
	// A shell that prints its environment and asks a question of its own.
	var sh spawned
	script := `echo "env:$AGENTD_SECRET_CANARY"; read -r -p "` + question + `? [y/N] " a; echo "got:$a"; sleep 30`
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir(), "env": env}, &sh)
	q := a.waitState(sh.SessionID, &from, 30*time.Second, "blocked", func(s stateNote) bool { return s.State == "blocked" && s.Prompt != nil })
	if q.Prompt.Question != question+"?" {
		t.Fatalf("prompt %+v", q.Prompt)
	}
	a.mustCall("session/input", map[string]any{"sessionId": sh.SessionID, "data": typed + "\r"}, nil)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(a.screenOf(sh.SessionID), "got:"+typed); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("input not typed:\n%s", a.screenOf(sh.SessionID))
		}
	}
	if screen := a.screenOf(sh.SessionID); !strings.Contains(screen, "env:"+secret) {
		t.Fatalf("the secret did not reach the session:\n%s", screen)
	}
	// A bad request that names a session, and a failed spawn.
	_ = a.call("session/input", map[string]any{"sessionId": "s999", "data": typed}, nil)
	_ = a.call("session/spawn", map[string]any{"argv": []string{"no-such-" + argvText}, "cwd": "/", "env": env}, nil)
	_ = a.in.Close()
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("agentd did not exit")
	}
	file, err := os.ReadFile(a.logTo)
	if err != nil {
		t.Fatal(err)
	}
	for name, log := range map[string]string{"log file": string(file), "stderr (--verbose)": stderr.String()} {
		if !strings.Contains(log, "session started") || !strings.Contains(log, demo.SessionID) {
			t.Errorf("%s does not log the sessions at all:\n%s", name, log)
		}
		for _, leak := range []string{secret, argvText, question, typed, sent, "Do you want to proceed", "touch NOTES.md", "Welcome to the agentd demo agent", b.Prompt.PromptID} {
			if strings.Contains(log, leak) {
				t.Errorf("%s holds %q:\n%s", name, leak, log)
			}
		}
	}
	t.Logf("log file: %d lines, none with screen text, prompt text, input or environment values", strings.Count(string(file), "\n"))
}
