package term

// renderRows brings t.shown up to date with the screen: every row when
// full or when the size changed, else the rows the emulator marked dirty
// since the last Snapshot (its Unlock clears the marks, and only Snapshot
// calls it). A row whose text did not change keeps its string. Called
// with t.mu and the emulator's lock held.
func (t *Terminal) renderRows(rows int, full bool) {
	if len(t.shown) != rows {
		t.shown = make([]string, rows)
		t.shownStyles = make([]string, rows)
		full = true
	}
	buf := t.rowBuf[:0]
	for y := 0; y < rows; y++ {
		if !full && !t.vt.Dirty(y) {
			continue
		}
		buf = t.vt.AppendText(buf[:0], y)
		if string(buf) != t.shown[y] {
			t.shown[y] = string(buf)
		}
		buf = t.vt.AppendStyles(buf[:0], y)
		if string(buf) != t.shownStyles[y] {
			t.shownStyles[y] = string(buf)
		}
	}
	t.rowBuf = buf
}
