package hosts

import (
	"context"
	"errors"
	"time"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/protocol"
)

// Backoff of Follow between attempts: from followFirst, doubling to
// followMost. A host that is down costs one ssh a minute at most; one
// that comes back is seen within a minute.
const (
	followFirst = time.Second
	followMost  = time.Minute
	// followDial bounds one attempt: ssh's connect, its login, the
	// forwarder's initialize and the first listing.
	followDial = 45 * time.Second
)

// Follower hears one host's agentd over the connection Follow keeps:
// Connected with its sessions as listed, then each notification, then
// Lost when the connection ends or cannot be made, and again. (The
// daemon's desktop notices for other hosts, rpc/notices, follow this way.)
type Follower interface {
	Connected(c *client.Client, list []protocol.Session)
	Note(n client.Notification)
	Lost(err error)
}

// Follow keeps one connection to h's agentd while ctx lasts, as a
// background client (it keeps no idle daemon there running, and starts
// none): f is told of each connection with the sessions listed, of every
// notification on it, and of each loss, and Follow dials again after a
// backoff.
func Follow(ctx context.Context, h config.Host, who protocol.ClientInfo, f Follower) {
	who.Background = true
	wait := followFirst
	for ctx.Err() == nil {
		r, list, err := follow(ctx, h, who, f)
		if err == nil {
			wait = followFirst
			f.Connected(r.Client, list)
			select {
			case <-r.Ended():
				err = errors.New("the ssh connection ended")
			case <-ctx.Done():
				r.Close()
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		f.Lost(err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		wait = min(wait*2, followMost)
	}
}

// follow dials h and lists its sessions.
func follow(ctx context.Context, h config.Host, who protocol.ClientInfo, f Follower) (*Remote, []protocol.Session, error) {
	dctx, cancel := context.WithTimeout(ctx, followDial)
	defer cancel()
	r, err := Dial(dctx, h, false, who, f.Note)
	if err != nil {
		return nil, nil, err
	}
	var list protocol.ListResult
	if err := r.Call(dctx, protocol.MethodList, nil, &list); err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, list.Sessions, nil
}
