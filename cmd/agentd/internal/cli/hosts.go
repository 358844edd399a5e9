//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/hosts"
	"github.com/agentd/agentd/rpc/protocol"
)

// Many machines, one view: config.toml's [[hosts]] names other machines,
// reached over the person's ssh (rpc/hosts). `agentd ls --all` lists every
// host's sessions; -H NAME, or a session named HOST:SESSION, points the
// other commands at one. docs/hosts.md.

// HostFlag adds -H to a command.
func HostFlag(fs *flag.FlagSet) *string {
	return fs.String("H", "", "the host (a [[hosts]] name in config.toml) whose agentd to use; default this machine")
}

// dialHost connects to host's daemon: this machine's where host is empty
// or the local entry, another's over ssh.
func dialHost(socket, host string, start bool, stderr io.Writer) (*Conn, error) {
	if host == "" {
		return dial(socket, start, stderr)
	}
	list, err := daemonlink.ConfiguredHosts()
	if err != nil {
		return nil, err
	}
	h, err := daemonlink.LookupHost(list, host)
	if err != nil {
		return nil, err
	}
	if h.Local {
		return dial(socket, start, stderr)
	}
	return dialRemote(h, start)
}

// dialRemote reaches h over ssh as a CLI client.
func dialRemote(h config.Host, start bool) (*Conn, error) {
	k := &Conn{host: h.Name, arrived: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), daemonlink.DialTimeout)
	defer cancel()
	r, err := hosts.Dial(ctx, h, start, protocol.ClientInfo{Name: "agentd-cli", Version: buildinfo.Version}, k.note)
	if errors.Is(err, hosts.ErrNoDaemon) {
		return nil, fmt.Errorf("%w on host %s", errNoDaemon, h.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	k.c = r.Client
	// The forwarder there said the hello; initialize says the same of
	// the daemon.
	k.c.Hello.Daemon, k.c.Hello.Warnings = r.Init.Daemon, r.Init.Warnings
	return k, nil
}

// DialRef connects for a command about one session: ref is SESSION, or
// HOST:SESSION where HOST names a host; -H says the same. It returns the
// session part of ref.
func DialRef(socket, host, ref string, start bool, stderr io.Writer) (*Conn, string, error) {
	if h, rest, ok := strings.Cut(ref, ":"); ok && h != "" && rest != "" {
		list, err := daemonlink.ConfiguredHosts()
		if err != nil {
			return nil, "", fmt.Errorf("%q may name a host, and the hosts cannot be read: %w", ref, err)
		}
		if _, err := daemonlink.LookupHost(list, h); err == nil {
			if host != "" && host != h {
				return nil, "", fmt.Errorf("%q names host %s, and -H says %s", ref, h, host)
			}
			host, ref = h, rest
		}
	}
	k, err := dialHost(socket, host, start, stderr)
	return k, ref, err
}

// hostReport is one host as `ls --all` and `agentd hosts` show it.
type hostReport struct {
	Name        string             `json:"name"`
	Destination string             `json:"destination,omitempty"`
	State       string             `json:"state"` // up, no daemon, unreachable
	Error       string             `json:"error,omitempty"`
	Version     string             `json:"version,omitempty"`
	Sessions    []protocol.Session `json:"sessions"`
	Millis      int64              `json:"ms"`
}

// Host states.
const (
	hostUp          = "up"
	hostNoDaemon    = "no daemon"
	hostUnreachable = "unreachable"
)

// reportHosts asks every host for its sessions at once: a host that does
// not answer is reported so, and holds up no other.
func reportHosts(socket string, list []config.Host) []hostReport {
	out := make([]hostReport, len(list))
	var wg sync.WaitGroup
	for i, h := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = reportHost(socket, h)
		}()
	}
	wg.Wait()
	return out
}

func reportHost(socket string, h config.Host) (rep hostReport) {
	rep = hostReport{Name: h.Name, Destination: h.SSH, Sessions: []protocol.Session{}}
	if h.Local {
		rep.Destination = "this machine"
	}
	start := time.Now()
	defer func() { rep.Millis = time.Since(start).Milliseconds() }()
	var k *Conn
	var err error
	if h.Local {
		k, err = dial(socket, false, io.Discard)
	} else {
		k, err = dialRemote(h, false)
		if err != nil {
			err = errors.Unwrap(err) // the table names the host
		}
	}
	switch {
	case errors.Is(err, errNoDaemon):
		rep.State = hostNoDaemon
		return rep
	case err != nil:
		rep.State, rep.Error = hostUnreachable, err.Error()
		return rep
	}
	defer k.Close()
	rep.Version = k.c.Hello.Daemon.Version
	list, err := k.list()
	if err != nil {
		rep.State, rep.Error = hostUnreachable, err.Error()
		return rep
	}
	rep.State, rep.Sessions = hostUp, list
	return rep
}

// lsAll is `agentd ls --all`: every host's sessions, with a HOST column.
func lsAll(socket string, asJSON bool, stdout, stderr io.Writer) int {
	list, err := daemonlink.ConfiguredHosts()
	if err != nil {
		return Fail(stderr, "ls", err)
	}
	reports := reportHosts(socket, list)
	if asJSON {
		b, _ := json.Marshal(map[string]any{"hosts": reports})
		fmt.Fprintln(stdout, string(b))
		return ExitOK
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tID\tNAME\tAGENT\tSTATE\tSINCE\tCWD")
	type row struct{ prompt string }
	var rows []row
	for _, r := range reports {
		if r.State != hostUp {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%s\t-\t%s\n", r.Name, r.State, OneLine(r.Error))
			rows = append(rows, row{})
			continue
		}
		for _, s := range r.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, s.SessionID, s.Name, s.Agent, stateWords(s.State, s.Outcome, s.Exit), ago(s.Since), s.Cwd)
			var p string
			if s.State == "blocked" && s.Prompt != nil {
				p = promptLine(s.Prompt)
			}
			rows = append(rows, row{p})
		}
	}
	_ = tw.Flush()
	lines := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
	fmt.Fprintln(stdout, lines[0])
	for i, r := range rows {
		fmt.Fprintln(stdout, strings.TrimRight(lines[i+1], " "))
		if r.prompt != "" {
			fmt.Fprintf(stdout, "    ↳ %s\n", r.prompt)
		}
	}
	return ExitOK
}

// Hosts is `agentd hosts`: each configured host, whether it answers,
// its daemon's version and its sessions.
func Hosts(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("hosts", stderr)
	asJSON := fs.Bool("json", false, "print the hosts as JSON")
	configured := fs.Bool("configured", false, "print the configured hosts as JSON without reaching any: what an editor starts a sidecar for (agentd --stdio --host NAME)")
	if _, err := ParseArgs(fs, args); err != nil {
		return ExitUsage
	}
	list, err := daemonlink.ConfiguredHosts()
	if err != nil {
		return Fail(stderr, "hosts", err)
	}
	if *configured {
		type entry struct {
			Name  string `json:"name"`
			Local bool   `json:"local,omitempty"`
			SSH   string `json:"ssh,omitempty"`
		}
		out := []entry{}
		for _, h := range list {
			out = append(out, entry{Name: h.Name, Local: h.Local, SSH: h.SSH})
		}
		b, _ := json.Marshal(map[string]any{"hosts": out})
		fmt.Fprintln(stdout, string(b))
		return ExitOK
	}
	reports := reportHosts(*socket, list)
	if *asJSON {
		b, _ := json.Marshal(map[string]any{"hosts": reports})
		fmt.Fprintln(stdout, string(b))
		return ExitOK
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tDESTINATION\tSTATE\tVERSION\tSESSIONS\tBLOCKED\tTIME")
	for _, r := range reports {
		blocked := 0
		for _, s := range r.Sessions {
			if s.State == "blocked" {
				blocked++
			}
		}
		state := r.State
		if r.Error != "" {
			state += ": " + OneLine(r.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d ms\n", r.Name, r.Destination, state, dash(r.Version), len(r.Sessions), blocked, r.Millis)
	}
	_ = tw.Flush()
	return ExitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OneLine keeps an agent's words (or a host's error) to one line of a
// listing.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
