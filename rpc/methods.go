package rpc

import (
	"context"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// methodTable is every method agentd serves. Nothing else names a method:
// the dispatcher (handle), the scheduling and the params decoding all come
// from here.
var methodTable = table(
	declare(protocol.MethodInitialize, inline, paramsOmittable, (*Server).initialize),
	declare(protocol.MethodShutdown, mayBlock, paramsIgnored, (*Server).shutdown),
	declare(protocol.MethodExit, inline, paramsIgnored, (*Server).exit).unanswered(),
	declare(protocol.MethodHello, inline, paramsRequired, (*Server).hello),
	declare(protocol.MethodStop, mayBlock, paramsOptional, (*Server).stopDaemon).then((*Server).Stop),
	declare(protocol.MethodUpgrade, mayBlock, paramsRequired, (*Server).upgrade),
	declare(protocol.MethodFocus, inline, paramsRequired, (*Server).focus),
	declare(protocol.MethodSpawn, mayBlock, paramsRequired, (*Server).spawn),
	declare(protocol.MethodList, inline, paramsIgnored, (*Server).list),
	onSession(protocol.MethodRead, inline, (*Server).read),
	onSession(protocol.MethodResize, inline, (*Server).resize),
	onSession(protocol.MethodInput, perSession, (*Server).input),
	onSession(protocol.MethodSubscribe, inline, (*Server).subscribe),
	onSession(protocol.MethodSeen, inline, (*Server).seen),
	onSession(protocol.MethodKill, inline, (*Server).kill),
	onSession(protocol.MethodClassify, inline, (*Server).classify),
	onSession(protocol.MethodCapture, inline, (*Server).capture),
	onSession(protocol.MethodPrompt, inline, (*Server).prompt),
	onSession(protocol.MethodCancel, inline, (*Server).cancel),
	onSession(protocol.MethodSend, mayBlock, (*Server).send),
	onSession(protocol.MethodAnswer, mayBlock, (*Server).answer),
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
type sessionParams interface{ Target() string }

// onSession makes a method on one session: its params (required) name the
// session by sessionId, and h is given that session.
func onSession[P sessionParams, R any](name string, sched schedule, h func(*Server, context.Context, *clientConn, *sessions.Session, P) (R, error)) method {
	return method{name: name, sched: sched,
		serve: func(s *Server, ctx context.Context, c *clientConn, req *jsonrpc2.Request) (any, error) {
			var p P
			if err := decode(req, &p); err != nil {
				return nil, err
			}
			if p.Target() == "" {
				return nil, invalidParams(req.Method, "params.sessionId is required")
			}
			sess, err := s.mgr.Get(p.Target())
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
