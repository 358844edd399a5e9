package sessions

// platformReadiness on macOS is select(2): see readiness for why.
func platformReadiness() (readiness, error) { return newSelectSet() }
