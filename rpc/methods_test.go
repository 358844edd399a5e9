package rpc

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/rpc/protocol"
)

// docs/protocol.md names every method and notification the table declares,
// and its list of methods that run concurrently is the table's.
func TestMethodsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for name := range methodTable {
		if !strings.Contains(doc, "`"+name+"`") && !strings.Contains(doc, "`"+name+" ") {
			t.Errorf("method %s is not in docs/protocol.md", name)
		}
	}
	for _, name := range []string{protocol.NoteState, protocol.NoteOutput, protocol.NoteUpdate, protocol.NoteExited} {
		if !strings.Contains(doc, "- `"+name+"` `{") {
			t.Errorf("notification %s is not listed in docs/protocol.md", name)
		}
	}
	_, after, ok := strings.Cut(doc, "Requests are handled in arrival order, except ")
	if !ok {
		t.Fatal(`docs/protocol.md has no "Requests are handled in arrival order, except" paragraph`)
	}
	listed, _, _ := strings.Cut(after, "which may take a while")
	var documented, declared []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(listed, -1) {
		documented = append(documented, m[1])
	}
	for name, m := range methodTable {
		if m.sched == mayBlock {
			declared = append(declared, name)
		}
	}
	slices.Sort(documented)
	slices.Sort(declared)
	if !slices.Equal(documented, declared) {
		t.Errorf("docs/protocol.md says %v run concurrently; methods.go declares %v mayBlock", documented, declared)
	}
}
