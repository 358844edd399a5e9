// Package client is the typed Go client of agentd's editor protocol:
// what the CLI, the forwarder's peers, the web page's server and other
// machines' followers use. It knows the protocol (rpc/protocol) and
// nothing of sessions.
package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
)

// Client is a Go client of the daemon, what the agentd CLI's commands use:
// one connection, the hello said, notifications passed to a callback.
type Client struct {
	conn  *jsonrpc2.Conn
	Hello protocol.HelloResult
}

// Notification is a message agentd sent unasked.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Dial connects to the daemon at path and says hello. onNote, when not
// nil, receives every notification, in order, on the connection's own
// goroutine: it must not block for long.
func Dial(ctx context.Context, path string, hello protocol.HelloParams, onNote func(Notification)) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return NewClient(ctx, nc, hello, onNote)
}

// NewClient is Dial on a connection already made.
func NewClient(ctx context.Context, nc net.Conn, hello protocol.HelloParams, onNote func(Notification)) (*Client, error) {
	path := nc.RemoteAddr().String()
	c := &Client{conn: jsonrpc2.NewConn(context.Background(), protocol.NewStream(nc, nc, nc), clientHandler(onNote))}
	if hello.ProtocolVersion == 0 {
		hello.ProtocolVersion = protocol.ProtocolVersion
	}
	if err := c.Call(ctx, protocol.MethodHello, hello, &c.Hello); err != nil {
		c.Close()
		if e, ok := err.(*jsonrpc2.Error); ok && e.Code == protocol.CodeMethodNotFound {
			return nil, OlderDaemonError(path, hello.Version)
		}
		return nil, fmt.Errorf("agentd daemon at %s: hello: %w", path, err)
	}
	if c.Hello.ProtocolVersion != protocol.ProtocolVersion {
		c.Close()
		return nil, IncompatibleError(c.Hello.Daemon, hello.Version)
	}
	return c, nil
}

// NewForwardedClient is a client over a stream to `agentd --stdio`, the
// forwarder, which says the hello to its daemon itself: another machine's
// agentd, over ssh (rpc/hosts). Hello stays empty; initialize's result
// says which daemon answers.
func NewForwardedClient(rwc io.ReadWriteCloser, onNote func(Notification)) *Client {
	return &Client{conn: jsonrpc2.NewConn(context.Background(), protocol.NewStream(rwc, rwc, rwc), clientHandler(onNote))}
}

// clientHandler passes the daemon's notifications to onNote and refuses
// its requests: a client serves no methods.
func clientHandler(onNote func(Notification)) jsonrpc2.Handler {
	return jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		if !req.Notif {
			return nil, &jsonrpc2.Error{Code: protocol.CodeMethodNotFound, Message: "the agentd CLI serves no methods"}
		}
		if onNote != nil {
			n := Notification{Method: req.Method}
			if req.Params != nil {
				n.Params = append(json.RawMessage(nil), *req.Params...)
			}
			onNote(n)
		}
		return nil, nil
	})
}

// IncompatibleError says that the running daemon speaks another protocol
// and how to replace it.
func IncompatibleError(d protocol.Daemon, mine string) error {
	return &jsonrpc2.Error{Code: protocol.CodeIncompatible, Message: fmt.Sprintf(
		"the running agentd daemon (pid %d, version %s) speaks protocol %d and this agentd (%s) speaks %d: "+
			"run `agentd stop` (or `agentd stop --force` to end its sessions too), then start again", d.Pid, d.Version, d.ProtocolVersion, mine, protocol.ProtocolVersion)}
}

// OlderDaemonError says that the daemon at path does not know agentd/hello:
// it is older than this agentd, and how to replace it.
func OlderDaemonError(path, mine string) error {
	return &jsonrpc2.Error{Code: protocol.CodeIncompatible, Message: fmt.Sprintf(
		"the agentd daemon at %s is older than this agentd (%s): it does not know %s; "+
			"run `agentd stop` (or `agentd stop --force` to end its sessions too), then start again", path, mine, protocol.MethodHello)}
}

// Call sends a request and waits for its result.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	return c.conn.Call(ctx, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.conn.DisconnectNotify() }

// Close ends the connection; the daemon and its sessions go on.
func (c *Client) Close() error { return c.conn.Close() }
