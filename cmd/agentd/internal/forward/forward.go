//go:build unix

// Package forward is `agentd --stdio` without --private: the editor's
// sidecar, a thin pipe to the per-user daemon. It says hello (its version,
// folder and environment, which the sessions it spawns run in), then moves
// bytes both ways unchanged, reading the editor's frame headers only to
// notice its exit. When stdin closes it exits and the sessions live on;
// when the daemon goes away it exits with an error, and the editor, which
// knows which sessions it saw, says which ended.
//
// Over ssh to another host's agentd it only moves bytes (host.go). It
// carries none of the daemon's code.
package forward

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/cmd/agentd/internal/upgrade"
	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

type options struct {
	socket  string
	flags   *daemonlink.ServerFlags
	idle    time.Duration
	noStart bool // connect to a running daemon only
}

// helloID is the forwarder's own request id; editors' ids never reach the
// daemon before the hello is answered.
const helloID = "agentd-forwarder-hello"

func toDaemon(o options, stdin io.Reader, stdout, stderr io.Writer) int {
	log, closeLog := daemonlink.OpenLog(o.flags.LogPath, o.flags.Verbose, false, stderr)
	defer closeLog()
	path, err := daemonlink.SocketPath(o.socket)
	if err != nil {
		return refuseEditor(stdin, stdout, stderr, err)
	}
	var nc *net.UnixConn
	if o.noStart {
		// A folder others can reach is a reason to say, not "no daemon".
		if err = daemonlink.CheckPrivateDir(filepath.Dir(path)); err == nil {
			nc, err = daemonlink.Dial(path)
		}
		if err != nil && daemonlink.CanStart(err) {
			err = &jsonrpc2.Error{Code: protocol.CodeNoDaemon, Message: fmt.Sprintf("no agentd daemon is running (nothing listens on %s), and --no-start starts none", path)}
		}
	} else {
		nc, err = daemonlink.Connect(path, o.flags, o.idle)
	}
	if err != nil {
		log.Error("forwarder: no daemon", "socket", path, "err", err)
		return refuseEditor(stdin, stdout, stderr, err)
	}
	defer nc.Close()
	fromDaemon := bufio.NewReaderSize(nc, 64<<10)
	hello, err := sayHello(nc, fromDaemon, stdout, o.flags.Cooldown)
	if err != nil {
		log.Error("forwarder: hello", "socket", path, "err", err)
		return refuseEditor(stdin, stdout, stderr, err)
	}
	if upgrade.Wanted(hello.Daemon) {
		// An older daemon: hand its sessions to this code first, then
		// forward to it. The editor has sent nothing yet that was passed on.
		nc.Close()
		var note strings.Builder
		upgrade.Auto(path, hello.Daemon, &note)
		log.Info("forwarder: " + strings.TrimSpace(note.String()))
		if nc, err = daemonlink.Dial(path); err == nil {
			defer nc.Close()
			fromDaemon = bufio.NewReaderSize(nc, 64<<10)
			hello, err = sayHello(nc, fromDaemon, stdout, o.flags.Cooldown)
		}
		if err != nil {
			log.Error("forwarder: after the upgrade", "socket", path, "err", err)
			return refuseEditor(stdin, stdout, stderr, err)
		}
	}
	if hello.ProtocolVersion != protocol.ProtocolVersion {
		err := client.IncompatibleError(hello.Daemon, buildinfo.Version)
		log.Error("forwarder: incompatible daemon", "err", err)
		return refuseEditor(stdin, stdout, stderr, err)
	}
	for _, w := range hello.Warnings {
		log.Warn("forwarder: " + w)
	}
	log.Info("forwarding", "pid", os.Getpid(), "daemon", hello.Pid, "socket", path)
	return pump(stdin, stdout, stderr, nc, fromDaemon, log, hello.Pid)
}

// sayHello sends the hello and reads up to its answer; anything the daemon
// sends before it (notifications) goes on to the editor.
func sayHello(nc net.Conn, r *bufio.Reader, stdout io.Writer, cooldown time.Duration) (protocol.HelloResult, error) {
	cwd, _ := os.Getwd()
	params := protocol.HelloParams{Version: buildinfo.Version, ProtocolVersion: protocol.ProtocolVersion, Pid: os.Getpid(), Cwd: cwd, Env: os.Environ(), CooldownMs: cooldown.Milliseconds()}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": helloID, "method": protocol.MethodHello, "params": params})
	if err := protocol.WriteMessage(nc, req); err != nil {
		return protocol.HelloResult{}, err
	}
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	defer nc.SetReadDeadline(time.Time{})
	for {
		body, err := protocol.ReadMessage(r)
		if err != nil {
			return protocol.HelloResult{}, fmt.Errorf("the daemon did not answer hello: %w", err)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &msg) != nil || string(msg.ID) != `"`+helloID+`"` {
			if err := protocol.WriteMessage(stdout, body); err != nil {
				return protocol.HelloResult{}, err
			}
			continue
		}
		if msg.Error != nil {
			if msg.Error.Code == protocol.CodeMethodNotFound {
				return protocol.HelloResult{}, client.OlderDaemonError(nc.RemoteAddr().String(), buildinfo.Version)
			}
			return protocol.HelloResult{}, fmt.Errorf("the daemon refused hello: %s", msg.Error.Message)
		}
		var res protocol.HelloResult
		if err := json.Unmarshal(msg.Result, &res); err != nil {
			return protocol.HelloResult{}, fmt.Errorf("the daemon's hello: %w", err)
		}
		return res, nil
	}
}

// pump copies both ways until the daemon closes its side. Closing stdin
// half-closes the socket: the daemon sends what it still has and closes.
// After the editor's exit notification the daemon closes the connection
// too; either way that end is the editor's doing and exits 0.
func pump(stdin io.Reader, stdout, stderr io.Writer, nc *net.UnixConn, fromDaemon io.Reader, log *slog.Logger, daemonPid int) int {
	var editorDone, exitSent atomic.Bool
	go func() {
		if err := copyEditor(nc, stdin, &exitSent); err == nil {
			editorDone.Store(true) // stdin ended; set before the daemon can see the end
		}
		_ = nc.CloseWrite()
	}()
	_, err := io.Copy(stdout, fromDaemon)
	if editorDone.Load() || exitSent.Load() {
		log.Info("forwarder: the editor closed its side; sessions live on in the daemon", "daemon", daemonPid)
		return 0
	}
	log.Error("forwarder: the daemon closed the connection", "daemon", daemonPid, "err", err)
	fmt.Fprintf(stderr, "agentd: the daemon (pid %d) closed the connection\n", daemonPid)
	return 1
}

// copyEditor copies the editor's bytes to the daemon unchanged, frame by
// frame, noting when one is the exit notification. Bytes it cannot frame
// go on as they are, and from there on it only copies.
func copyEditor(dst io.Writer, src io.Reader, exitSent *atomic.Bool) error {
	r := bufio.NewReaderSize(src, 64<<10)
	for {
		header, n, ok, err := readHeader(r)
		if len(header) > 0 {
			if _, werr := dst.Write(header); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if !ok {
			_, err := io.Copy(dst, r)
			return err
		}
		if n <= 64 {
			// Only an exit notification is that short; look at it.
			body := make([]byte, n)
			if _, err := io.ReadFull(r, body); err != nil {
				_, _ = dst.Write(body)
				return err
			}
			var msg struct {
				Method string          `json:"method"`
				ID     json.RawMessage `json:"id"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == protocol.MethodExit && msg.ID == nil {
				exitSent.Store(true)
			}
			if _, err := dst.Write(body); err != nil {
				return err
			}
			continue
		}
		if _, err := io.CopyN(dst, r, int64(n)); err != nil {
			return err
		}
	}
}

// readHeader reads one frame's header lines, returning their bytes as read
// and the Content-Length; ok is false when the header does not make sense
// (the daemon will say so to the editor).
func readHeader(r *bufio.Reader) (raw []byte, length int, ok bool, err error) {
	length = -1
	for {
		line, err := r.ReadSlice('\n')
		raw = append(raw, line...)
		if err == bufio.ErrBufferFull {
			return raw, 0, false, nil // no header line is that long
		}
		if err != nil {
			if err == io.EOF && len(raw) > 0 {
				return raw, 0, false, io.ErrUnexpectedEOF
			}
			return raw, 0, false, err
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			if length < 0 {
				if len(raw) == len(line) {
					raw = raw[:0] // a blank line between frames
					continue
				}
				return raw, 0, false, nil
			}
			return raw, length, true, nil
		}
		name, value, found := strings.Cut(text, ":")
		if !found {
			return raw, 0, false, nil
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > protocol.MaxMessage {
				return raw, 0, false, nil
			}
			length = n
		}
	}
}

// refuseEditor answers the editor's first request with err, so the editor
// shows why there is no agentd, and exits.
func refuseEditor(stdin io.Reader, stdout, stderr io.Writer, err error) int {
	msg := err.Error()
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		msg = je.Message
	}
	if je == nil || je.Code != protocol.CodeNoDaemon {
		fmt.Fprintf(stderr, "agentd: %s\n", msg) // no daemon for --no-start is no news
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body, rerr := protocol.ReadMessage(bufio.NewReader(stdin))
		if rerr != nil {
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
			return
		}
		code := int64(protocol.CodeDaemonUnavailable)
		if je != nil {
			code = je.Code
		}
		reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": "agentd: " + msg}})
		_ = protocol.WriteMessage(stdout, reply)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return 1
}
