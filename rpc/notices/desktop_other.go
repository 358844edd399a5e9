//go:build !linux && !darwin

package notices

import "errors"

func openDesktop(desktopEvents) (desktopBackend, error) {
	return nil, errors.New("no desktop notices on this OS")
}
