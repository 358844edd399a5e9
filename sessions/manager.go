package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/program"
)

// Events receives what sessions report. Implementations must not block:
// they are called from the sessions' own goroutines.
type Events interface {
	// State is a new state; previous is the one told before it.
	State(info Info, previous State)
	Output(sessionID, data string)
	// Update passes an ACP session/update on as the agent sent it, in wire
	// order with the session's states.
	Update(sessionID string, update json.RawMessage)
	Exited(sessionID string, status ExitStatus)
}

// Options configure a Manager.
type Options struct {
	Rules *detect.Set
	// Grace is how long a process group has between SIGHUP and SIGKILL.
	Grace time.Duration
	// ReportDir, when set, is where the report socket is made (its folder
	// 0700, the socket 0600): programs in a session report their state there.
	ReportDir string
	// Self is agentd's own executable, which hooks run as `Self report …`.
	Self string
	Log  *slog.Logger
	// Keeper, when set, is told "+pgid" when a session starts and "-pgid"
	// when it has ended, so it can end what is left should agentd die.
	Keeper io.Writer
	// PermissionTimeout answers an ACP permission nobody answered in this
	// time with the agent's reject option (default 30 minutes).
	PermissionTimeout time.Duration
	// DaemonSocket, when agentd runs as the per-user daemon, is its socket:
	// sessions get it as AGENTD_SOCKET, so an agentd command run inside a
	// session reaches the daemon that hosts it.
	DaemonSocket string
	// KeepExited is how long an exited session stays listed, with its last
	// screen, so a window opened later sees how it ended (default 1 h).
	KeepExited time.Duration
	// DetectPoll, for benchmarks only, makes every PTY session render all
	// its rows and classify them on this ticker whether or not they changed,
	// instead of when output arrives: the way a poller with the same rules
	// works.
	DetectPoll time.Duration
	// ScreensDir, when set, is where a session keeps a screen its agent's
	// own report disagrees with (screens.go): drift from the field.
	ScreensDir string
	// Version is agentd's, written into kept screens.
	Version string
}

// Manager owns every session.
type Manager struct {
	opts   Options
	events Events

	mu       sync.Mutex
	sessions map[string]*Session
	order    []string
	next     int
	closed   bool
	outputs  map[string]int // output subscribers per session
	reports  *reportServer
	keeperMu sync.Mutex
	pump     *pump
	// now is the clock decisions are made on: time.Now, except in a test
	// that steps a session through a recording on the recording's clock.
	now func() time.Time
}

// NewManager returns a manager that reports to events.
func NewManager(opts Options, events Events) *Manager {
	if opts.Grace == 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.PermissionTimeout == 0 {
		opts.PermissionTimeout = 30 * time.Minute
	}
	if opts.KeepExited == 0 {
		opts.KeepExited = time.Hour
	}
	m := &Manager{opts: opts, events: events, sessions: map[string]*Session{}, outputs: map[string]int{}, pump: newPump(), now: time.Now}
	if opts.ReportDir != "" {
		rs, err := listenReports(opts.ReportDir, m, opts.Log)
		if err != nil {
			opts.Log.Warn("no report socket: hooks and agentd signal will not reach agentd", "dir", opts.ReportDir, "err", err)
		} else {
			m.reports = rs
		}
	}
	return m
}

// ReportSocket is the path of the report socket, or "" when there is none.
func (m *Manager) ReportSocket() string {
	if m.reports == nil {
		return ""
	}
	return m.reports.path
}

// Rules returns the manifests in use.
func (m *Manager) Rules() *detect.Set { return m.opts.Rules }

// SpawnSpec describes a session to start.
type SpawnSpec struct {
	Argv []string
	Cwd  string
	// BaseEnv is the environment of the client that asked for the session
	// (nil: agentd's own). A daemon started hours ago from another shell
	// must not hand its PATH and keys to an agent a client starts now.
	BaseEnv []string
	// Env is added to BaseEnv; a nil value removes a variable.
	Env        map[string]*string
	Cols, Rows int
	Agent      string
	Name       string
	// Hooks false keeps agentd from adding its hooks to an agent that has
	// them (Claude Code); nil means add them.
	Hooks *bool
	// ACP runs the agent over the Agent Client Protocol instead of a PTY.
	// Agent may then be any name: it picks a display manifest only where
	// one exists, and the agent's own initialize names it otherwise.
	ACP bool
	// AuthMethod is the ACP login method to use if the agent asks for one.
	AuthMethod string
	// Origin says which client started the session and for which folders.
	Origin Origin
	// capture, when > 0, keeps that much of the output as text (terminals
	// an ACP agent runs read it).
	capture int
}

// ErrShuttingDown refuses new sessions once shutdown started.
var ErrShuttingDown = errors.New("agentd is shutting down")

// Spawn starts a session. argv runs directly, never through a shell.
func (m *Manager) Spawn(spec SpawnSpec) (*Session, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("argv is empty: name the program to run")
	}
	if spec.Cols == 0 {
		spec.Cols = 120
	}
	if spec.Rows == 0 {
		spec.Rows = 40
	}
	if spec.Cols < 2 || spec.Rows < 2 || spec.Cols > 1000 || spec.Rows > 1000 {
		return nil, fmt.Errorf("size %dx%d: cols and rows must be between 2 and 1000", spec.Cols, spec.Rows)
	}
	if spec.Cwd == "" {
		spec.Cwd, _ = os.Getwd()
	}
	if st, err := os.Stat(spec.Cwd); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("cwd %q is not a directory", spec.Cwd)
	}
	env := buildEnv(spec.BaseEnv, spec.Env)
	path, err := program.LookPath(spec.Argv[0], spec.Cwd, env)
	if err != nil {
		return nil, err
	}
	manifest, err := m.pickManifest(spec)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrShuttingDown
	}
	m.next++
	id := "s" + strconv.Itoa(m.next)
	m.mu.Unlock()
	name := spec.Name
	if name == "" && spec.ACP && manifest.Name == detect.Generic {
		name = filepath.Base(spec.Argv[0]) // until the agent names itself
	} else if name == "" {
		name = manifest.Display
		if name == "" || manifest.Name == detect.Generic {
			name = filepath.Base(spec.Argv[0])
		}
	}
	s := &Session{
		ID: id, Name: name, Argv: append([]string(nil), spec.Argv...), Cwd: spec.Cwd,
		Origin: spec.Origin, mgr: m, manifest: manifest, base: manifest,
		machine: newMachine(startingState(manifest.Name, time.Now())),
	}
	s.machine.salt = newSalt()
	s.drv = newDriver(s, spec)
	// The spawn result tells the editor this first state: the first
	// notification's previous is it.
	s.lastPublished = s.machine.state
	argv := append([]string{path}, spec.Argv[1:]...)
	if m.opts.DaemonSocket != "" {
		env = append(env, EnvDaemonSocket+"="+m.opts.DaemonSocket)
	}
	if sock := m.ReportSocket(); sock != "" {
		s.token = newToken()
		env = append(env, EnvSocket+"="+sock, EnvSession+"="+id, EnvToken+"="+s.token)
	}
	if err := s.drv.start(argv, env, spec); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	if s.Pid > 0 { // 0: an ACP agent that waits on its login
		m.tellKeeper('+', s.Pid)
	}
	m.mu.Lock()
	m.sessions[id] = s
	m.order = append(m.order, id)
	m.mu.Unlock()
	s.drv.begin()
	return s, nil
}

func (m *Manager) pickManifest(spec SpawnSpec) (*detect.Manifest, error) {
	rules := m.opts.Rules
	if spec.Agent != "" {
		mf, ok := rules.Lookup(spec.Agent)
		if !ok && spec.ACP {
			// An ACP session needs no screen rules: any agent may run.
			mf, _ = rules.Lookup(detect.Generic)
			return mf, nil
		}
		if !ok {
			return nil, fmt.Errorf("unknown agent %q (known: %s)", spec.Agent, strings.Join(rules.Names(), ", "))
		}
		return mf, nil
	}
	if mf := rules.IdentifyProcess(filepath.Base(spec.Argv[0]), spec.Argv); mf != nil {
		return mf, nil
	}
	mf, _ := rules.Lookup(detect.Generic)
	return mf, nil
}

// buildEnv is the base environment (agentd's own when nil) with the spawn's
// additions, and a terminal description agents draw well in. The variables
// agentd gives a session of its own are never inherited from the base: a
// client that runs inside another session must not pass that session's
// token on.
func buildEnv(base []string, extra map[string]*string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["TERM"] = "xterm-256color"
	env["COLORTERM"] = "truecolor"
	for k, v := range extra {
		if v == nil {
			delete(env, k)
			continue
		}
		env[k] = *v
	}
	for _, k := range []string{EnvSocket, EnvSession, EnvToken, EnvDaemonSocket} {
		delete(env, k) // agentd's own to set
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Origin is where a session was asked for: the client's name and the
// workspace folders it had open, so editors can list "this workspace" first.
type Origin struct {
	Client  string
	Folders []string
}

// ErrNoSession is returned for an unknown session id.
type ErrNoSession struct{ ID string }

func (e *ErrNoSession) Error() string { return fmt.Sprintf("no session %q", e.ID) }

// Get returns a session by id.
func (m *Manager) Get(id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, &ErrNoSession{ID: id}
	}
	return s, nil
}

// List returns every session, oldest first.
func (m *Manager) List() []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Session, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.sessions[id])
	}
	return out
}

// Subscribe counts an output subscriber for a session.
func (m *Manager) Subscribe(id string, output bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if output {
		m.outputs[id]++
	} else if m.outputs[id] > 0 {
		m.outputs[id]--
	}
}

func (m *Manager) hasOutputSubscribers(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.outputs[id] > 0
}

// publish tells events about a new state and the one told before it.
func (m *Manager) publish(s *Session, st State) {
	s.mu.Lock()
	prev := s.lastPublished
	s.lastPublished = st
	s.mu.Unlock()
	m.events.State(s.Info(), prev)
}

// ended is called once a session's exit has been told: it stays listed
// for KeepExited, then it is forgotten.
func (m *Manager) ended(s *Session) {
	time.AfterFunc(m.opts.KeepExited, func() { m.forget(s.ID) })
}

func (m *Manager) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	delete(m.outputs, id)
	for i, o := range m.order {
		if o == id {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}

// Live counts the sessions whose process has not ended.
func (m *Manager) Live() int {
	n := 0
	for _, s := range m.List() {
		if !s.isExited() {
			n++
		}
	}
	return n
}

// tellKeeper passes a process group's start or end to the keeper.
func (m *Manager) tellKeeper(op byte, pgid int) {
	if m.opts.Keeper == nil {
		return
	}
	m.keeperMu.Lock()
	defer m.keeperMu.Unlock()
	_, _ = fmt.Fprintf(m.opts.Keeper, "%c%d\n", op, pgid)
}

func answerable(p *detect.Prompt) bool { return p != nil && len(p.Options) > 0 }

// Shutdown ends every session's process group and waits for them.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	m.closed = true
	list := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		list = append(list, s)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop(m.opts.Grace)
		}()
	}
	wg.Wait()
	if m.reports != nil {
		m.reports.close()
	}
	if c, ok := m.opts.Keeper.(io.Closer); ok {
		_ = c.Close()
	}
}
