package detect

import "testing"

func TestKeyTemplates(t *testing.T) {
	tests := []struct {
		tmpl string
		ctx  keyContext
		want string
	}{
		{"{id}", keyContext{id: "2"}, "2"},
		{"{key}", keyContext{key: "y"}, "y"},
		{"{key}", keyContext{key: "esc"}, "\x1b"},
		{"{key}", keyContext{}, ""}, // no hint on the row: not answerable
		{"{key}<enter>", keyContext{key: "N"}, "N\r"},
		{"<left*{count}><right*{i}><enter>", keyContext{index: 2, count: 3}, "\x1b[D\x1b[D\x1b[D\x1b[C\x1b[C\r"},
		{"<down*{down}><up*{up}><enter>", keyContext{index: 0, selected: 2}, "\x1b[A\x1b[A\r"},
		{"<down*{down}><up*{up}><enter>", keyContext{index: 3, selected: 1}, "\x1b[B\x1b[B\r"},
		{"{key|id}", keyContext{id: "1"}, "1"},
		{"{key|id}", keyContext{id: "3", key: "Esc"}, "\x1b"},
		{"{key|id}", keyContext{}, ""},
		{"<esc>", keyContext{}, "\x1b"},
		{"<lt>{n}", keyContext{index: 4}, "<5"},
	}
	for _, tc := range tests {
		tm, err := parseKeys(tc.tmpl)
		if err != nil {
			t.Fatalf("%q: %v", tc.tmpl, err)
		}
		if got := tm.expand(tc.ctx); got != tc.want {
			t.Errorf("%q with %+v = %q, want %q", tc.tmpl, tc.ctx, got, tc.want)
		}
	}
	for _, bad := range []string{"{nope}", "<nope>", "{id", "<esc", "<down*x>"} {
		if _, err := parseKeys(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestPositionalTemplates(t *testing.T) {
	for tmpl, want := range map[string]bool{
		"{id}": false, "{key}": false, "<right*{i}><enter>": true,
		"<down*{down}><up*{up}><enter>": true, "<right*2><enter>": false,
	} {
		k, err := parseKeys(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if k.positional() != want {
			t.Errorf("%s: positional %v, want %v", tmpl, !want, want)
		}
	}
}

func TestSteppedTemplates(t *testing.T) {
	for tmpl, want := range map[string]bool{
		"{id}": false, "<right*{i}><enter>": false, "<left*{count}><right*{i}><enter>": false,
		"<down*{down}><up*{up}><enter>": true, "<up*{up}><down*{down}><enter>": true, "<right*2><enter>": false,
	} {
		k, err := parseKeys(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if k.stepsSelection() != want {
			t.Errorf("%s: stepsSelection %v, want %v", tmpl, !want, want)
		}
	}
}
