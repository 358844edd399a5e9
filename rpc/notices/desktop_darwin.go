package notices

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
)

// macOS: Notification Center through osascript's `display notification`,
// which every Mac has. That path cannot carry buttons, and a notice it
// posts cannot be taken down again: the notice only tells; the person
// answers in an editor or with agentd attach.

type osascriptBackend struct{ next atomic.Uint32 }

func openDesktop(desktopEvents) (desktopBackend, error) {
	if _, err := exec.LookPath("osascript"); err != nil {
		return nil, fmt.Errorf("no osascript: %w", err)
	}
	return &osascriptBackend{}, nil
}

// appleString quotes s as an AppleScript string literal.
func appleString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func (b *osascriptBackend) Notify(ctx context.Context, n desktopNotice, _ uint32) (uint32, error) {
	script := "display notification " + appleString(n.Body) + " with title " + appleString("agentd") + " subtitle " + appleString(n.Title)
	if out, err := exec.CommandContext(ctx, "osascript", "-e", script).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("osascript: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return b.next.Add(1), nil
}

// Close cannot reach a notice osascript posted.
func (b *osascriptBackend) Close(context.Context, uint32) error { return errCannotClose }

func (b *osascriptBackend) Actions() bool { return false }

func (b *osascriptBackend) Shutdown() {}
