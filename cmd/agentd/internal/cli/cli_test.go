//go:build unix

package cli

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/agentd/agentd/rpc/protocol"
)

// Flags are read wherever they are among the arguments, and "--" ends
// them: `agentd wait s1 --until blocked`, `agentd run -- bash -c x`.
func TestParseArgsTakesFlagsAnywhere(t *testing.T) {
	for _, c := range []struct {
		args      []string
		pos       []string
		until, cw string
	}{
		{[]string{"s1", "--until", "blocked"}, []string{"s1"}, "blocked", ""},
		{[]string{"--until", "idle", "s1", "--cwd", "/x"}, []string{"s1"}, "idle", "/x"},
		{[]string{"--cwd", "/y", "--", "bash", "--until", "z"}, []string{"bash", "--until", "z"}, "", "/y"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		until, cwd := fs.String("until", "", ""), fs.String("cwd", "", "")
		pos, err := ParseArgs(fs, c.args)
		if err != nil || !slices.Equal(pos, c.pos) || *until != c.until || *cwd != c.cw {
			t.Errorf("ParseArgs(%q) = %q, --until %q, --cwd %q, %v; want %q, %q, %q", c.args, pos, *until, *cwd, err, c.pos, c.until, c.cw)
		}
	}
}

// An option is found by id, else by its label in any case.
func TestPickOption(t *testing.T) {
	p := &protocol.Prompt{Options: []protocol.Option{{ID: "1", Label: "Yes"}, {ID: "2", Label: "No, and tell Claude"}}}
	for want, id := range map[string]string{"1": "1", "yes": "1", "NO, AND TELL CLAUDE": "2"} {
		if o, ok := pickOption(p, want); !ok || o.ID != id {
			t.Errorf("pickOption(%q) = %+v, %v; want option %s", want, o, ok, id)
		}
	}
	if o, ok := pickOption(p, "maybe"); ok {
		t.Errorf("pickOption(maybe) = %+v, want none", o)
	}
}

// ls shows an exit by its signal or code, and a done by its outcome.
func TestStateWords(t *testing.T) {
	for _, c := range []struct {
		state, outcome string
		exit           *protocol.Exit
		want           string
	}{
		{"blocked", "", nil, "blocked"},
		{"done", "success", nil, "done (success)"},
		{"exited", "", &protocol.Exit{ExitCode: 3}, "exited (3)"},
		{"exited", "", &protocol.Exit{Signal: "SIGKILL"}, "exited (SIGKILL)"},
	} {
		if got := stateWords(c.state, c.outcome, c.exit); got != c.want {
			t.Errorf("stateWords(%q, %q, %+v) = %q, want %q", c.state, c.outcome, c.exit, got, c.want)
		}
	}
}
