module github.com/agentd/agentd

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/adrg/xdg v0.5.3
	github.com/aymanbagabas/go-udiff v0.4.2
	github.com/coder/acp-go-sdk v0.13.0
	github.com/creack/pty v1.1.24
	github.com/godbus/dbus/v5 v5.2.4
	github.com/hinshun/vt10x v0.0.0-00010101000000-000000000000
	github.com/rogpeppe/go-internal v1.16.0
	github.com/skip2/go-qrcode v0.0.0-20200617195104-da1b6568686e
	github.com/sourcegraph/jsonrpc2 v0.2.3
	go.uber.org/goleak v1.3.0
	golang.org/x/mod v0.21.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require github.com/mattn/go-runewidth v0.0.31 // indirect

require (
	github.com/clipperhouse/uax29/v2 v2.2.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
	vt10x.upstream/pinned v0.0.0-20220301184237-5011da428d02
)

// agentd's fork of vt10x (see sessions/term/vt10x/README.md).
replace github.com/hinshun/vt10x => ./sessions/term/vt10x

// The upstream vt10x the fork started from, under another name, so that
// sessions/term's equivalence test can run both side by side.
replace vt10x.upstream/pinned => github.com/hinshun/vt10x v0.0.0-20220301184237-5011da428d02
