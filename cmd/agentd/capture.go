//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// cmdCapture writes one session's screen to a file a person can attach to
// a bug report (sessions.ScreenRecord): the terminal output that draws it,
// what the rules read, the session's state, agentd's version.
func cmdCapture(args []string, stdout, stderr io.Writer) int {
	fs, socket := newFlags("capture", stderr)
	host := hostFlag(fs)
	out := fs.String("o", "", "the file to write (default: agentd-screen-SESSION.json in this folder)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: agentd capture SESSION [-o FILE]")
		return exitUsage
	}
	k, ref, err := dialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return fail(stderr, "capture", err)
	}
	defer k.close()
	s, err := k.find(ref)
	if err != nil {
		return fail(stderr, "capture", err)
	}
	var rec sessions.ScreenRecord
	if err := k.call(protocol.MethodCapture, protocol.SessionRef{SessionID: s.SessionID}, &rec); err != nil {
		return fail(stderr, "capture", err)
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
		return fail(stderr, "capture", err)
	}
	fmt.Fprintf(stdout, "wrote %s: %s's screen (%dx%d), %s [%s], the rules read %s [%s]\n", path, rec.Agent, rec.Cols, rec.Rows,
		rec.State, rec.Reason, rec.Verdict.State, rec.Verdict.Reason)
	fmt.Fprintf(stdout, "check it with: agentd explain %s\n", path)
	return exitOK
}

// cmdDoctor lists the screens the daemon kept because an agent's own
// report and its screen disagreed: screens the rules do not know.
func cmdDoctor(args []string, stdout, stderr io.Writer) int {
	fs, _ := newFlags("doctor", stderr)
	if _, err := parseArgs(fs, args); err != nil {
		return exitUsage
	}
	dir := daemonlink.ScreensDir()
	kept, err := sessions.KeptScreens(dir)
	if err != nil && !os.IsNotExist(err) {
		return fail(stderr, "doctor", err)
	}
	if len(kept) == 0 {
		fmt.Fprintf(stdout, "no screens kept in %s: no agent's report has disagreed with its screen\n", dir)
		return exitOK
	}
	fmt.Fprintf(stdout, "%d screen(s) in %s where an agent's report and its screen disagreed (newest last):\n", len(kept), dir)
	for _, path := range kept {
		b, err := os.ReadFile(path)
		rec, ok := sessions.ReadScreenRecord(b)
		if err != nil || !ok {
			fmt.Fprintf(stdout, "  %s: not a kept screen\n", filepath.Base(path))
			continue
		}
		fmt.Fprintf(stdout, "  %s  %s %s (agentd %s): %s\n", filepath.Base(path), rec.Agent, rec.At.Local().Format("2006-01-02 15:04:05"), rec.Agentd, oneLine(rec.Why))
	}
	fmt.Fprintln(stdout, "look at one with agentd explain FILE; attach it to a bug report as it is (secret-shaped text is redacted)")
	return exitOK
}

// oneLine keeps an agent's words to one line of a listing.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
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
