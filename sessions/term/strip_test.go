package term

import "testing"

func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[1mbold\x1b[0m":                        "bold",
		"a\x1b]0;title\ab":                          "ab",
		"a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "alink",
		"\x1b(Bplain\x1b)0":                         "plain",
		"\x1bPq#0;2;0;0;0\x1b\\x":                   "x",
		"keep\r\n\ttabs\a":                          "keep\r\n\ttabs\a",
		"\x1b7saved\x1b8":                           "saved",
		"cut\x1b":                                   "cut",
		"cut\x1b[12":                                "cut",
	} {
		if got := string(StripEscapes([]byte(in))); got != want {
			t.Errorf("StripEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}
