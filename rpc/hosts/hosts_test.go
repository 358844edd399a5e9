package hosts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/protocol"
)

// The ssh command: the person's options before the destination, "--"
// before it, and only agentd's own words after it: nothing a session
// holds goes on ssh's command line.
func TestArgv(t *testing.T) {
	h := config.Host{Name: "box", SSH: "me@box", SSHOptions: []string{"-p", "2222"}, Agentd: "~/bin/agentd"}
	got := Argv(h, false)
	want := []string{"ssh", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3",
		"-p", "2222", "--", "me@box", "~/bin/agentd --stdio --no-start"}
	if !slices.Equal(got, want) {
		t.Fatalf("Argv = %q\nwant   %q", got, want)
	}
	if got := Argv(h, true); got[len(got)-1] != "~/bin/agentd --stdio" {
		t.Errorf("Argv with start: %q", got[len(got)-1])
	}
}

// A destination ssh cannot reach: the error is ssh's own last words, and
// comes well before the deadline.
func TestDialUnreachable(t *testing.T) {
	h := config.Host{Name: "none", SSH: "127.0.0.1", SSHOptions: []string{"-F", "/dev/null", "-p", "1", "-o", "UserKnownHostsFile=/dev/null"}, Agentd: "agentd"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Dial(ctx, h, false, protocol.ClientInfo{Name: "test"}, nil)
	if err == nil || !strings.Contains(err.Error(), "ssh: connect to host 127.0.0.1 port 1") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial to a closed port: %v; want ssh's refusal", err)
	}
}
