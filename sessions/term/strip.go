package term

// StripEscapes returns b without its escape sequences: CSI (ESC [ …
// final byte), the string sequences OSC, DCS, SOS, PM and APC (up to BEL or
// ST), character-set designations (ESC ( B and the like) and other
// two-byte escapes. Everything else, control characters included, stays:
// callers decide what plain text means to them.
func StripEscapes(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b {
			out = append(out, b[i])
			continue
		}
		if i+1 == len(b) {
			break // a lone ESC at the end
		}
		switch b[i+1] {
		case '[':
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
		case ']', 'P', 'X', '^', '_':
			j := i + 2
			for j < len(b) && b[j] != 0x07 && !(b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\') {
				j++
			}
			if j < len(b) && b[j] == 0x1b {
				j++ // the ST's backslash
			}
			i = j
		case '(', ')', '*', '+', '-', '.', '/', '#', '%':
			i += 2
		default:
			i++
		}
	}
	return out
}
