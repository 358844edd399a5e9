module github.com/hinshun/vt10x

go 1.24

require github.com/mattn/go-runewidth v0.0.31

require github.com/clipperhouse/uax29/v2 v2.2.0 // indirect
