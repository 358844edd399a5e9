//go:build unix

// Package report is what a program inside a session runs to tell agentd
// what it does: agentd's Claude Code hooks (agentd report) and any
// program (agentd signal), through the report socket agentd gave the
// session.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/agentd/agentd/sessions"
)

// Hook is what agentd's Claude Code hooks run: it passes the hook's
// JSON (stdin) to the agentd that started the session. It always exits 0
// and prints nothing on stdout, so a hook can never block or confuse the
// agent; problems go to stderr.
func Hook(args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: agentd report <hook event>   (hook JSON on stdin)")
		return 0
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, sessions.MaxReport/2))
	if err != nil {
		fmt.Fprintln(stderr, "agentd report:", err)
		return 0
	}
	if len(payload) > 0 && !json.Valid(payload) {
		payload = nil
	}
	if err := sendReport(sessions.Report{Kind: "hook", Event: args[0], Payload: payload}); err != nil {
		fmt.Fprintln(stderr, "agentd report:", err)
	}
	return 0
}

// Signal lets any program inside a session say what it is doing.
func Signal(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: agentd signal working|needs-input|turn-ended|done")
		return 2
	}
	if err := sendReport(sessions.Report{Kind: "signal", Event: args[0]}); err != nil {
		fmt.Fprintln(stderr, "agentd signal:", err)
		return 1
	}
	return 0
}

// sendReport delivers a report with this session's socket and token, found
// in the environment agentd gave the session.
func sendReport(rep sessions.Report) error {
	sock := os.Getenv(sessions.EnvSocket)
	rep.Session = os.Getenv(sessions.EnvSession)
	rep.Token = os.Getenv(sessions.EnvToken)
	if sock == "" || rep.Session == "" || rep.Token == "" {
		return fmt.Errorf("not inside an agentd session (%s, %s and %s are not all set)", sessions.EnvSocket, sessions.EnvSession, sessions.EnvToken)
	}
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := json.NewEncoder(conn).Encode(rep); err != nil {
		return err
	}
	var reply sessions.ReportReply
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&reply); err != nil {
		return fmt.Errorf("no reply from agentd: %w", err)
	}
	if !reply.OK {
		return fmt.Errorf("%s", reply.Error)
	}
	return nil
}
