package main

// The "signals" section: how early or late each agent's own signal comes
// against its screen. Every recorded session of an agent that has one is
// replayed write by write through the emulator, the agent's manifest
// classifying after each write; each signal is paired with the nearest
// change of the screen's verdict into the states it stands for. Lead is
// how long before that screen change the signal came (negative: after).
// A signal and a frame delivered in one read are 0 apart: the recording
// cannot tell them apart, and neither can agentd.
//
// A signal is worth combining in decide() only where it leads the screen
// and pairs with a screen change every time: a signal that lags adds
// nothing, and one that comes without its state on screen misleads.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

func init() {
	register(section{
		name: "signals",
		what: "each agent's own signals (OSC 7501, OSC 7777, OSC 9;4, title glyphs) against its screen, from the recordings",
		run:  runSignals,
	})
}

// agentSignal is one kind of signal an agent gives of itself, read from a
// write and the screen after it.
type agentSignal struct {
	agent, name string
	// means: the screen states the signal stands for.
	means []string
	// seen reports whether the signal arrived with this write, given the
	// title before and after it.
	seen func(write []byte, before, after string) bool
}

// titleGlyph is a signal carried by the title's first rune becoming glyph.
func titleGlyph(glyphs string) func([]byte, string, string) bool {
	first := func(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }
	return func(_ []byte, before, after string) bool {
		return first(after) != first(before) && strings.ContainsRune(glyphs, first(after))
	}
}

// osc is a signal carried by an escape sequence starting with prefix.
func osc(prefix string) func([]byte, string, string) bool {
	return func(w []byte, _, _ string) bool { return bytes.Contains(w, []byte(prefix)) }
}

var agentSignals = []agentSignal{
	{"claude", "OSC 7501 state=blocked", []string{detect.StateBlocked}, osc("\x1b]7501;state=blocked")},
	{"codex", "OSC 7501 state=blocked", []string{detect.StateBlocked}, osc("\x1b]7501;state=blocked")},
	{"auggie", "OSC 7777;idle", []string{detect.StateIdle, detect.StateDone, detect.StateError}, osc("\x1b]7777;idle")},
	{"copilot", "OSC 9;4 progress", []string{detect.StateWorking}, osc("\x1b]9;4;")},
	{"qwen", "title ✳ (at a prompt)", []string{detect.StateBlocked}, titleGlyph("✳")},
	{"qwen", "title ◐ (working)", []string{detect.StateWorking}, titleGlyph("◐◓◑◒")},
}

// pairWithin is how far apart a signal and a screen change may be and
// still be the same event.
const pairWithin = 2 * time.Second

type screenChange struct {
	at    time.Duration
	state string
}

func runSignals(b *bench) (string, error) {
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		return "", fmt.Errorf("load rules: %v", errs)
	}
	var out strings.Builder
	out.WriteString("| agent | signal | stands for | sessions | signals | paired | lead median | lead min … max | unpaired |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, sig := range agentSignals {
		m, ok := rules.Lookup(sig.agent)
		if !ok {
			return "", fmt.Errorf("no rules for %s", sig.agent)
		}
		files, _ := filepath.Glob(filepath.Join(b.root, "fixtures", sig.agent, "*", "sessions", "*.raw"))
		sort.Strings(files)
		var leads []time.Duration
		signals, unpaired := 0, 0
		for _, raw := range files {
			base := strings.TrimSuffix(raw, ".raw")
			writes, delays, err := recording.Read(raw, base+".timing")
			if err != nil {
				return "", err
			}
			rec, err := readSessionRec(base + ".json")
			if err != nil {
				return "", err
			}
			t := term.New(term.Options{Cols: rec.Cols, Rows: rec.Rows})
			var at time.Duration
			var changes []screenChange
			var sent []time.Duration
			title, state := "", ""
			for i, w := range writes {
				at += delays[i]
				t.Write(w)
				sc := t.Snapshot()
				if sig.seen(w, title, sc.Title) {
					sent = append(sent, at)
				}
				title = sc.Title
				if v := m.Classify(sc); v.State != state {
					changes = append(changes, screenChange{at, v.State})
					state = v.State
				}
			}
			signals += len(sent)
			for _, ts := range sent {
				lead, ok := nearestChange(changes, ts, sig.means)
				if !ok {
					unpaired++
					continue
				}
				leads = append(leads, lead)
			}
		}
		row := fmt.Sprintf("| %s | %s | %s | %d | %d | %d | ", sig.agent, sig.name, strings.Join(sig.means, ", "), len(files), signals, len(leads))
		if len(leads) == 0 {
			row += "— | — |"
		} else {
			sort.Slice(leads, func(i, j int) bool { return leads[i] < leads[j] })
			row += fmt.Sprintf("%s | %s … %s |", detMs(leads[len(leads)/2]), detMs(leads[0]), detMs(leads[len(leads)-1]))
		}
		out.WriteString(row + fmt.Sprintf(" %d |\n", unpaired))
	}
	out.WriteString("\nLead: how long before the screen's verdict changed into a state the signal stands for the signal came (negative: after it). Paired: signals with such a change within ±2 s. Times are the recordings' own (each PTY read's arrival), replayed write by write through the emulator and the agent's manifest.\n")
	return out.String(), nil
}

// nearestChange is the lead of the screen change into one of means nearest
// to ts, within pairWithin.
func nearestChange(changes []screenChange, ts time.Duration, means []string) (time.Duration, bool) {
	best, found := time.Duration(0), false
	for _, c := range changes {
		if !slices.Contains(means, c.state) {
			continue
		}
		d := c.at - ts
		if d < -pairWithin || d > pairWithin {
			continue
		}
		if !found || abs(d) < abs(best) {
			best, found = d, true
		}
	}
	return best, found
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// readSessionRec reads a session recording's metadata (its .json).
func readSessionRec(path string) (*sessionRec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &sessionRec{path: path}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
