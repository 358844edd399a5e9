package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentd/agentd/sessions"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agentd":            func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"acp-login-standin": acpLoginStandIn,
	})
}

// TestScripts runs the CLI scripts in testdata/script: each runs the real
// agentd binary's commands on real captures from fixtures/ and compares output.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../fixtures")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			// make portable: the scripts' agentd takes macOS's paths too.
			env.Setenv(sessions.EnvPortable, os.Getenv(sessions.EnvPortable))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "config"))
			// Each script has its own daemon, stopped (with its sessions)
			// when the script ends, passed or not.
			socket := filepath.Join(env.WorkDir, "run", "agentd.sock")
			env.Setenv("AGENTD_SOCKET", socket)
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("XDG_RUNTIME_DIR", filepath.Join(env.WorkDir, "xdg-runtime"))
			env.Defer(func() {
				stop := exec.Command("agentd", "stop", "--force")
				stop.Env = env.Vars
				_ = stop.Run()
			})
			return nil
		},
	})
}
