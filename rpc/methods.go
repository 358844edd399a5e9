package rpc

import (
	"context"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/sessions"
)

// The methods agentd serves. Each is declared once, in methodTable below:
// its name, its params and result types (from its handler's signature),
// how its params are read, and how it is scheduled. docs/protocol.md is
// the reference for each.
const (
	MethodInitialize = "initialize"
	MethodShutdown   = "shutdown"
	// MethodExit is the notification that closes the connection after
	// shutdown; it is never answered.
	MethodExit = "exit"
	// MethodHello is what a forwarder or the CLI sends first on the
	// daemon's socket: who it is and the environment sessions it asks for
	// should run in.
	MethodHello = "agentd/hello"
	// MethodStop ends the daemon (agentd stop).
	MethodStop = "agentd/stop"
	// MethodUpgrade asks the daemon to hand its sessions to another agentd
	// binary (agentd upgrade; docs/upgrade.md). A daemon that hands over
	// does not answer: its process becomes the new binary, every
	// connection closes, and the client sees the new daemon when it
	// connects again. Any answer is a refusal, and says why; the sessions
	// then run on under this daemon.
	MethodUpgrade = "agentd/upgrade"
	// MethodFocus is client/focus: whether the person is looking at this
	// client now. Desktop notices are raised only while no client is
	// focused.
	MethodFocus     = "client/focus"
	MethodSpawn     = "session/spawn"
	MethodList      = "session/list"
	MethodRead      = "session/read"
	MethodResize    = "session/resize"
	MethodInput     = "session/input"
	MethodSubscribe = "session/subscribe"
	MethodSeen      = "session/seen"
	MethodKill      = "session/kill"
	MethodClassify  = "session/classify"
	MethodCapture   = "session/capture"
	MethodPrompt    = "session/prompt"
	MethodCancel    = "session/cancel"
	MethodSend      = "runtime_send"
	MethodAnswer    = "runtime_answer"
)

// The notifications agentd sends, each with its params type.
const (
	NoteState  = "session/state"  // StateNotification, to every client
	NoteOutput = "session/output" // OutputNotification, to the session's subscribers
	NoteUpdate = "session/update" // UpdateNotification, to every client
	NoteExited = "session/exited" // ExitedNotification, to every client
)

// methodTable is every method agentd serves. Nothing else names a method:
// the dispatcher (handle), the scheduling and the params decoding all come
// from here.
var methodTable = table(
	declare(MethodInitialize, inline, paramsOmittable, (*Server).initialize),
	declare(MethodShutdown, mayBlock, paramsIgnored, (*Server).shutdown),
	declare(MethodExit, inline, paramsIgnored, (*Server).exit).unanswered(),
	declare(MethodHello, inline, paramsRequired, (*Server).hello),
	declare(MethodStop, mayBlock, paramsOptional, (*Server).stopDaemon).then((*Server).Stop),
	declare(MethodUpgrade, mayBlock, paramsRequired, (*Server).upgrade),
	declare(MethodFocus, inline, paramsRequired, (*Server).focus),
	declare(MethodSpawn, mayBlock, paramsRequired, (*Server).spawn),
	declare(MethodList, inline, paramsIgnored, (*Server).list),
	onSession(MethodRead, inline, (*Server).read),
	onSession(MethodResize, inline, (*Server).resize),
	onSession(MethodInput, perSession, (*Server).input),
	onSession(MethodSubscribe, inline, (*Server).subscribe),
	onSession(MethodSeen, inline, (*Server).seen),
	onSession(MethodKill, inline, (*Server).kill),
	onSession(MethodClassify, inline, (*Server).classify),
	onSession(MethodCapture, inline, (*Server).capture),
	onSession(MethodPrompt, inline, (*Server).prompt),
	onSession(MethodCancel, inline, (*Server).cancel),
	onSession(MethodSend, mayBlock, (*Server).send),
	onSession(MethodAnswer, mayBlock, (*Server).answer),
)

// schedule is how a method's requests are run.
type schedule int

const (
	// inline: on the connection's dispatcher, in arrival order with the
	// other inline requests.
	inline schedule = iota
	// mayBlock: on a goroutine of its own, so that what arrives behind it
	// (keystrokes) is not held up.
	mayBlock
	// perSession: off the dispatcher, in arrival order per session (params
	// sessionId); at most maxWaitingInputs wait behind the one running.
	perSession
)

// paramsMode is how a method reads its params.
type paramsMode int

const (
	// paramsRequired: absent or null params are invalid.
	paramsRequired paramsMode = iota
	// paramsOmittable: absent params are the zero value; null ones are
	// invalid.
	paramsOmittable
	// paramsOptional: absent or null params are the zero value.
	paramsOptional
	// paramsIgnored: params are never read.
	paramsIgnored
)

// noParams is the params of a method that reads none.
type noParams = struct{}

// none is the result of a method without one: it answers "result": null.
type none = *struct{}

// method is one declared method.
type method struct {
	name  string
	sched schedule
	// quiet: never answered, even when sent as a request (exit).
	quiet bool
	// after runs once the handler has succeeded and its answer is sent.
	after func(*Server)
	serve func(s *Server, ctx context.Context, c *clientConn, req *jsonrpc2.Request) (any, error)
}

// declare makes a method of handler h, whose params type P and result type
// R are its wire types.
func declare[P, R any](name string, sched schedule, mode paramsMode, h func(*Server, context.Context, *clientConn, P) (R, error)) method {
	return method{name: name, sched: sched,
		serve: func(s *Server, ctx context.Context, c *clientConn, req *jsonrpc2.Request) (any, error) {
			var p P
			if err := readParams(req, mode, &p); err != nil {
				return nil, err
			}
			return h(s, ctx, c, p)
		}}
}

// sessionParams are params that name a session.
type sessionParams interface{ session() string }

// onSession makes a method on one session: its params (required) name the
// session by sessionId, and h is given that session.
func onSession[P sessionParams, R any](name string, sched schedule, h func(*Server, context.Context, *clientConn, *sessions.Session, P) (R, error)) method {
	return method{name: name, sched: sched,
		serve: func(s *Server, ctx context.Context, c *clientConn, req *jsonrpc2.Request) (any, error) {
			var p P
			if err := decode(req, &p); err != nil {
				return nil, err
			}
			if p.session() == "" {
				return nil, invalidParams(req.Method, "params.sessionId is required")
			}
			sess, err := s.mgr.Get(p.session())
			if err != nil {
				return nil, err
			}
			return h(s, ctx, c, sess, p)
		}}
}

// unanswered returns m never answered.
func (m method) unanswered() method { m.quiet = true; return m }

// then returns m with f run after each success, once it is answered.
func (m method) then(f func(*Server)) method { m.after = f; return m }

// table indexes methods by name; a name declared twice is a mistake.
func table(ms ...method) map[string]*method {
	out := make(map[string]*method, len(ms))
	for i := range ms {
		if _, dup := out[ms[i].name]; dup {
			panic("rpc: method " + ms[i].name + " declared twice")
		}
		out[ms[i].name] = &ms[i]
	}
	return out
}

// readParams decodes req's params into v as mode says.
func readParams(req *jsonrpc2.Request, mode paramsMode, v any) error {
	switch mode {
	case paramsIgnored:
		return nil
	case paramsOmittable:
		if req.Params == nil {
			return nil
		}
	case paramsOptional:
		if req.Params == nil || string(*req.Params) == "null" {
			return nil
		}
	}
	return decode(req, v)
}

// ref is a pointer to a copy of v: results are pointers, so that a handler
// that fails returns nil.
func ref[T any](v T) *T { return &v }
