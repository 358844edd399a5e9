package daemonlink

import (
	"path/filepath"
	"strconv"
)

// userRunDir is the user's own run folder, made by logind.
func userRunDir(uid int) string { return filepath.Join("/run/user", strconv.Itoa(uid)) }
