//go:build unix

package webhost

import (
	"net"
	"testing"
)

// Plain http is refused off loopback unless TLS or the person's word
// says the network may see the token.
func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr           string
		useTLS, trusts bool
		ok             bool
	}{
		{"127.0.0.1:7433", false, false, true},
		{"localhost:7433", false, false, true},
		{"[::1]:7433", false, false, true},
		{"0.0.0.0:7433", false, false, false},
		{"192.0.2.1:7433", true, false, true},
		{"192.0.2.1:7433", false, true, true},
		{"no port", false, false, false},
	} {
		if err := checkListen(c.addr, c.useTLS, c.trusts); (err == nil) != c.ok {
			t.Errorf("checkListen(%q, tls %v, trusted %v) = %v, want ok %v", c.addr, c.useTLS, c.trusts, err, c.ok)
		}
	}
}

// The printed link points where a browser reaches the page: the proxy's
// https name for a --host name on loopback, 127.0.0.1 for every address.
func TestBaseURL(t *testing.T) {
	loop := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 7433}
	all := &net.TCPAddr{IP: net.IPv4zero, Port: 7433}
	for _, c := range []struct {
		useTLS bool
		addr   *net.TCPAddr
		hosts  []string
		want   string
	}{
		{false, loop, nil, "http://127.0.0.1:7433"},
		{false, loop, []string{"box.tail.ts.net"}, "https://box.tail.ts.net"},
		{false, all, nil, "http://127.0.0.1:7433"},
		{true, all, []string{"box.lan"}, "https://box.lan:7433"},
	} {
		if got := baseURL(c.useTLS, c.addr, c.hosts); got != c.want {
			t.Errorf("baseURL(%v, %s, %q) = %q, want %q", c.useTLS, c.addr, c.hosts, got, c.want)
		}
	}
}
