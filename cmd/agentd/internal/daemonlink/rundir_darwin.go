package daemonlink

// userRunDir: macOS has no per-user run folder; $TMPDIR is per user.
func userRunDir(int) string { return "" }
