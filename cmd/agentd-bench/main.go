// Command agentd-bench measures agentd beside the other ways agent state is
// detected, on the committed real recordings, and writes its tables into
// docs/benchmarks.md between <!-- bench:NAME --> and <!-- /bench:NAME -->
// markers, leaving the prose around them alone. It prints the same tables.
//
//	go run ./cmd/agentd-bench                 # every section
//	go run ./cmd/agentd-bench -only scale     # one section (comma list)
//	go run ./cmd/agentd-bench -quick          # shorter runs, for a smoke test
//
// It builds agentd and the replayer itself; the throughput section needs
// node (for @xterm/headless, installed from fixtures/bench/xterm).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// section is one table of the report.
type section struct {
	name string
	what string
	run  func(*bench) (string, error)
}

// sections in the order they appear in docs/benchmarks.md. Each file of
// this command adds its own with init.
var sections []section

func register(s section) { sections = append(sections, s) }

// bench is what every section shares: the built binaries and the repository.
type bench struct {
	root   string // repository root
	agentd string // built agentd binary
	replay string // built fixtures/replay binary
	tmp    string
	quick  bool
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func main() {
	only := flag.String("only", "", "comma-separated sections to run (default: all)")
	doc := flag.String("doc", "docs/benchmarks.md", "the file whose marked sections are replaced; empty to only print")
	quick := flag.Bool("quick", false, "shorter runs (a smoke test, not numbers to publish)")
	flag.Parse()

	root, err := repoRoot()
	if err != nil {
		fatal(err)
	}
	tmp, err := os.MkdirTemp("", "agentd-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	b := &bench{root: root, tmp: tmp, quick: *quick,
		agentd: filepath.Join(tmp, "agentd"), replay: filepath.Join(tmp, "replay")}
	for bin, pkg := range map[string]string{b.agentd: "./cmd/agentd", b.replay: "./fixtures/replay"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fatal(fmt.Errorf("go build %s: %v\n%s", pkg, err, out))
		}
	}

	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	for n := range want {
		if !known(n) {
			fatal(fmt.Errorf("no section %q; there are: %s", n, names()))
		}
	}
	failed := false
	for _, s := range sections {
		if len(want) > 0 && !want[s.name] {
			continue
		}
		b.logf("%s: %s", s.name, s.what)
		t0 := time.Now()
		table, err := s.run(b)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s failed: %v\n", s.name, err)
			failed = true
			continue
		}
		b.logf("%s took %s", s.name, time.Since(t0).Round(time.Second))
		fmt.Printf("## %s\n\n%s\n", s.name, table)
		if *doc != "" {
			if err := replaceSection(filepath.Join(root, *doc), s.name, table); err != nil {
				fatal(err)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func known(name string) bool {
	for _, s := range sections {
		if s.name == name {
			return true
		}
	}
	return false
}

func names() string {
	var ns []string
	for _, s := range sections {
		ns = append(ns, s.name)
	}
	return strings.Join(ns, ", ")
}

// replaceSection puts body between the section's markers in the file, or
// appends the markers and body when the file has none yet.
func replaceSection(path, name, body string) error {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	open, close := "<!-- bench:"+name+" -->", "<!-- /bench:"+name+" -->"
	block := open + "\n" + strings.TrimRight(body, "\n") + "\n" + close
	re := regexp.MustCompile("(?s)" + regexp.QuoteMeta(open) + ".*?" + regexp.QuoteMeta(close))
	text := string(data)
	if re.MatchString(text) {
		text = re.ReplaceAllLiteralString(text, block)
	} else {
		text = strings.TrimRight(text, "\n") + "\n\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run agentd-bench inside the agentd repository", dir)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "agentd-bench:", err)
	os.Exit(2)
}
