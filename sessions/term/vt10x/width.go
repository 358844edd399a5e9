package vt10x

import (
	"sync"

	"github.com/mattn/go-runewidth"
)

// widthCondition is fixed, not taken from the locale as go-runewidth's
// default is: East Asian ambiguous characters are one cell, as the
// libraries agents draw with (string-width, unicode-width) count them.
var widthCondition = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// bmpWidths holds the width (0, 1 or 2) of every rune below U+10000, two
// bits each: go-runewidth searches tables per call, and box drawing and
// spinner glyphs come thousands of times a second.
var bmpWidths = sync.OnceValue(func() *[1 << 14]byte {
	var w [1 << 14]byte
	for r := rune(0); r < 1<<16; r++ {
		w[r>>2] |= byte(widthCondition.RuneWidth(r)&3) << ((r & 3) * 2)
	}
	return &w
})

// RuneWidth is the number of cells r takes: 0 for combining marks, joiners
// and variation selectors, 2 for wide (CJK, most emoji), else 1.
func RuneWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	if r < 1<<16 {
		return int(bmpWidths()[r>>2]>>((r&3)*2)) & 3
	}
	return widthCondition.RuneWidth(r)
}
