package notices

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"
)

// Linux: the freedesktop Notifications service on the person's session
// bus (dunst, mako, GNOME Shell, KDE Plasma all serve it).

const (
	fdoName  = "org.freedesktop.Notifications"
	fdoPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	fdoIface = "org.freedesktop.Notifications"
)

type fdoBackend struct {
	conn    *dbus.Conn
	obj     dbus.BusObject
	actions bool
	markup  bool
	signals chan *dbus.Signal
}

// openDesktop connects to the session bus named by
// DBUS_SESSION_BUS_ADDRESS (or $XDG_RUNTIME_DIR/bus). It never launches a
// bus: a daemon with none simply shows no notices.
func openDesktop(ev desktopEvents) (desktopBackend, error) {
	ctx, cancel := context.WithTimeout(context.Background(), desktopCallTimeout)
	defer cancel()
	conn, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		return nil, fmt.Errorf("no D-Bus session bus: %w", err)
	}
	if err := conn.Auth(nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("D-Bus session bus: %w", err)
	}
	if err := conn.Hello(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("D-Bus session bus: %w", err)
	}
	b := &fdoBackend{conn: conn, obj: conn.Object(fdoName, fdoPath), signals: make(chan *dbus.Signal, 16)}
	var caps []string
	if err := b.obj.CallWithContext(ctx, fdoIface+".GetCapabilities", 0).Store(&caps); err != nil {
		conn.Close()
		return nil, fmt.Errorf("no notification server on the session bus (%s.GetCapabilities): %w", fdoName, err)
	}
	b.actions = slices.Contains(caps, "actions")
	b.markup = slices.Contains(caps, "body-markup")
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchInterface(fdoIface), dbus.WithMatchObjectPath(fdoPath)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("D-Bus: watching %s's signals: %w", fdoName, err)
	}
	conn.Signal(b.signals)
	go b.listen(ev)
	return b, nil
}

// listen passes the server's ActionInvoked and NotificationClosed on,
// until the connection ends (godbus closes the channel then).
func (b *fdoBackend) listen(ev desktopEvents) {
	for sig := range b.signals {
		switch sig.Name {
		case fdoIface + ".ActionInvoked":
			var id uint32
			var key string
			if dbus.Store(sig.Body, &id, &key) == nil {
				ev.Action(id, key)
			}
		case fdoIface + ".NotificationClosed":
			var id, reason uint32
			if dbus.Store(sig.Body, &id, &reason) == nil {
				ev.Closed(id, reason)
			}
		}
	}
}

func (b *fdoBackend) Notify(ctx context.Context, n desktopNotice, replaces uint32) (uint32, error) {
	body := n.Body
	if b.markup { // a question may hold <, > or &
		body = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(body)
	}
	actions := []string{}
	for _, a := range n.Actions {
		actions = append(actions, a.Key, a.Label)
	}
	hints := map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant("agentd")}
	timeout := int32(-1) // the server's default
	if n.Sticky {
		timeout = 0 // until agentd takes it down: the prompt waits
	}
	var id uint32
	err := b.obj.CallWithContext(ctx, fdoIface+".Notify", 0, "agentd", replaces, "", n.Title, body, actions, hints, timeout).Store(&id)
	return id, err
}

func (b *fdoBackend) Close(ctx context.Context, id uint32) error {
	return b.obj.CallWithContext(ctx, fdoIface+".CloseNotification", 0, id).Err
}

func (b *fdoBackend) Actions() bool { return b.actions }

func (b *fdoBackend) Shutdown() { _ = b.conn.Close() }
