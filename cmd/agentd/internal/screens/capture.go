//go:build unix

package screens

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/cmd/agentd/internal/cli"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// Capture writes one session's screen to a file a person can attach to
// a bug report (sessions.ScreenRecord): the terminal output that draws it,
// what the rules read, the session's state, agentd's version.
func Capture(args []string, stdout, stderr io.Writer) int {
	fs, socket := cli.Flags("capture", stderr)
	host := cli.HostFlag(fs)
	out := fs.String("o", "", "the file to write (default: agentd-screen-SESSION.json in this folder)")
	pos, err := cli.ParseArgs(fs, args)
	if err != nil {
		return cli.ExitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: agentd capture SESSION [-o FILE]")
		return cli.ExitUsage
	}
	k, ref, err := cli.DialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return cli.Fail(stderr, "capture", err)
	}
	defer k.Close()
	s, err := k.Find(ref)
	if err != nil {
		return cli.Fail(stderr, "capture", err)
	}
	var rec sessions.ScreenRecord
	if err := k.Call(protocol.MethodCapture, protocol.SessionRef{SessionID: s.SessionID}, &rec); err != nil {
		return cli.Fail(stderr, "capture", err)
	}
	path := *out
	if path == "" {
		path = "agentd-screen-" + safeFileName(s.SessionID) + ".json"
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		return cli.Fail(stderr, "capture", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %s's screen (%dx%d), %s [%s], the rules read %s [%s]\n", path, rec.Agent, rec.Cols, rec.Rows,
		rec.State, rec.Reason, rec.Verdict.State, rec.Verdict.Reason)
	fmt.Fprintf(stdout, "check it with: agentd explain %s\n", path)
	return cli.ExitOK
}

// Doctor lists the screens the daemon kept because an agent's own
// report and its screen disagreed: screens the rules do not know.
func Doctor(args []string, stdout, stderr io.Writer) int {
	fs, _ := cli.Flags("doctor", stderr)
	if _, err := cli.ParseArgs(fs, args); err != nil {
		return cli.ExitUsage
	}
	dir := daemonlink.ScreensDir()
	kept, err := sessions.KeptScreens(dir)
	if err != nil && !os.IsNotExist(err) {
		return cli.Fail(stderr, "doctor", err)
	}
	if len(kept) == 0 {
		fmt.Fprintf(stdout, "no screens kept in %s: no agent's report has disagreed with its screen\n", dir)
		return cli.ExitOK
	}
	fmt.Fprintf(stdout, "%d screen(s) in %s where an agent's report and its screen disagreed (newest last):\n", len(kept), dir)
	for _, path := range kept {
		b, err := os.ReadFile(path)
		rec, ok := sessions.ReadScreenRecord(b)
		if err != nil || !ok {
			fmt.Fprintf(stdout, "  %s: not a kept screen\n", filepath.Base(path))
			continue
		}
		fmt.Fprintf(stdout, "  %s  %s %s (agentd %s): %s\n", filepath.Base(path), rec.Agent, rec.At.Local().Format("2006-01-02 15:04:05"), rec.Agentd, cli.OneLine(rec.Why))
	}
	fmt.Fprintln(stdout, "look at one with agentd explain FILE; attach it to a bug report as it is (secret-shaped text is redacted)")
	return cli.ExitOK
}

// safeFileName keeps a session id fit for a file name.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}
