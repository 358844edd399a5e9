//go:build unix

// Command agentd-sshhosts starts other machines for an editor's end-to-end
// test: a real OpenSSH server on loopback per host (rpc/hosts/hoststest,
// each with its own HOME, socket and daemon), and writes config.toml
// naming them under -config (XDG_CONFIG_HOME of the agentd that reaches
// them). It prints one JSON line once they take connections, then reads
// commands from stdin: "down NAME" takes a host off the network (its
// daemon and sessions run on), "up NAME" brings it back, "stop NAME" ends
// its daemon and sessions (the host stays up); each is answered with "ok". Stdin closing, or SIGTERM, takes every host down and stops
// their daemons. Used by editors/vscode/test/e2e/hosts.test.mjs.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/agentd/agentd/rpc/hosts/hoststest"
)

// tb is what hoststest needs of a test, for a program: a failure ends it
// after the clean-ups run.
type tb struct {
	testing.TB
	dir      string
	cleanups []func()
}

func (t *tb) Helper() {}

func (t *tb) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"agentd-sshhosts:"}, args...)...)
	t.cleanup()
	os.Exit(1)
}

func (t *tb) Fatalf(format string, args ...any) { t.Fatal(fmt.Sprintf(format, args...)) }
func (t *tb) Skip(args ...any)                  { t.Fatal(args...) }
func (t *tb) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }

func (t *tb) TempDir() string {
	d, err := os.MkdirTemp(t.dir, "h")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (t *tb) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
	os.RemoveAll(t.dir)
}

func main() {
	agentd := flag.String("agentd", "", "the agentd binary each host's logins run")
	config := flag.String("config", "", "XDG_CONFIG_HOME to write agentd/config.toml into")
	flag.Parse()
	if *agentd == "" || *config == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: agentd-sshhosts -agentd BIN -config DIR NAME...")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "agentd-sshhosts-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	t := &tb{dir: dir}
	keys := hoststest.NewKeys(t)
	hosts := map[string]*hoststest.Host{}
	var list []*hoststest.Host
	type info struct {
		Socket string `json:"socket"`
		Dir    string `json:"dir"`
		Port   int    `json:"port"`
	}
	out := map[string]info{}
	for _, name := range flag.Args() {
		h := hoststest.Start(t, keys, name, *agentd)
		hosts[name] = h
		list = append(list, h)
		out[name] = info{Socket: h.Socket, Dir: h.Dir, Port: h.Port}
	}
	hoststest.WriteConfig(t, *config, list...)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		t.cleanup()
		os.Exit(0)
	}()
	b, _ := json.Marshal(map[string]any{"hosts": out})
	fmt.Println(string(b))
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || hosts[f[1]] == nil {
			fmt.Println("error: want down NAME, up NAME or stop NAME")
			continue
		}
		switch f[0] {
		case "down":
			hosts[f[1]].Down()
		case "up":
			hosts[f[1]].Up()
		case "stop":
			hosts[f[1]].StopDaemon()
		default:
			fmt.Println("error: want down NAME, up NAME or stop NAME")
			continue
		}
		fmt.Println("ok")
	}
	t.cleanup()
}
