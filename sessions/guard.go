package sessions

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/detect"
)

// Errors of guarded writes. Each has its own protocol error code.
var (
	ErrExited        = errors.New("the session has exited")
	ErrNoPrompt      = errors.New("no prompt is on screen")
	ErrUnknownOption = errors.New("the prompt has no such option")
	ErrNotAnswerable = errors.New("the agent's rules name no keys for this answer")
	ErrAlreadyAnswer = errors.New("this prompt was already answered and is still leaving the screen")
	ErrMovedByHand   = errors.New("keys were typed at this prompt and its selection does not show on screen: answer it in the terminal")
)

// BlockedError refuses programmatic input while a prompt waits.
type BlockedError struct{ Prompt *detect.Prompt }

func (e *BlockedError) Error() string {
	return "the agent is blocked on a prompt; answer it with runtime_answer"
}

// StaleError refuses an answer to a prompt that is no longer on screen.
type StaleError struct {
	Answered string
	// Was is the prompt Answered named, when the session still recalls it.
	Was     *detect.Prompt
	Current *detect.Prompt // nil when no prompt is on screen
}

func (e *StaleError) Error() string {
	var b strings.Builder
	b.WriteString("the prompt answered (" + e.Answered)
	if s := subjectText(e.Was); s != "" {
		b.WriteString(": " + s)
	}
	b.WriteString(") is no longer the one on screen")
	switch {
	case e.Current == nil:
		b.WriteString("; none is now")
	case subjectText(e.Current) != "":
		b.WriteString("; on screen now (" + e.Current.ID + "): " + subjectText(e.Current))
	default:
		b.WriteString("; on screen now: " + e.Current.ID)
	}
	return b.String()
}

// subjectText is what a prompt asks to approve, quoted, or its question.
func subjectText(p *detect.Prompt) string {
	switch {
	case p == nil:
		return ""
	case p.Subject != nil && p.Subject.Text != "":
		return p.Subject.Kind + " " + strconv.Quote(p.Subject.Text)
	case p.Question != "":
		return strconv.Quote(p.Question)
	}
	return ""
}

// ErrNotTaken: the text sent to an agent never showed on its screen, so
// agentd did not press Enter.
var ErrNotTaken = errors.New("the agent did not take the text (it never showed on screen); nothing was submitted")

// typedWait bounds how long Send waits for an agent to show its text.
const typedWait = 2 * time.Second

// showsStart reports whether the screen shows the first few characters of
// text: part of it may have been taken.
func (d *ptyDriver) showsStart(text string) bool {
	start := []rune(text)
	start = start[:min(len(start), 3)]
	return strings.Contains(d.term.Snapshot().Text(), string(start))
}

// answerWait bounds how long an answer waits for its prompt to leave.
const answerWait = 3 * time.Second

// Send writes programmatic input, unless the agent is blocked or gone. The
// screen is classified afresh first: the last sweep may be stale.
func (s *Session) Send(text string, submit bool) error {
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	if s.isExited() {
		return ErrExited
	}
	st := s.update()
	if st.Name == Blocked {
		return &BlockedError{Prompt: st.Prompt}
	}
	return s.drv.send(text, submit)
}

// send types text, and Enter where submit says so, once the screen shows
// the text landed.
func (d *ptyDriver) send(text string, submit bool) error {
	s := d.s
	payload := []byte(text)
	s.mu.Lock()
	bracketed, raw, gap := s.manifest.PasteBracketed(), s.manifest.Input.Raw, s.manifest.Input.SubmitDelay()
	s.mu.Unlock()
	// The end of the text, and how often the screen shows it already (a
	// task sent twice is in the transcript): Enter waits for one more.
	tail := textTail(text)
	shown := strings.Count(d.term.Snapshot().Text(), tail)
	if bracketed && d.term.BracketedPaste() && text != "" {
		payload = append(append([]byte("\x1b[200~"), payload...), []byte("\x1b[201~")...)
	}
	s.mu.Lock()
	s.machine.tasked()
	s.mu.Unlock()
	if err := d.write(payload); err != nil {
		return err
	}
	if submit && raw && text != "" && !d.awaitMore(text, 0) {
		// A raw agent that dropped what was typed (Grok CLI, just after
		// it switched its keys on) shows none of it: only then is typing
		// it again sure not to double it. Enter goes only after the text
		// is seen.
		if d.showsStart(text) {
			return ErrNotTaken
		}
		if err := d.write(payload); err != nil {
			return err
		}
		if !d.awaitMore(text, 0) {
			return ErrNotTaken
		}
	}
	if submit {
		// An agent that reads the paste and the Enter after it in one read
		// takes the Enter as a newline inside the paste (Auggie did under
		// load, with 30 ms between them): Enter goes once the text's end
		// shows on screen, or after typedWait where it never does (input
		// the agent does not echo, or wrapped at its end).
		if tail != "" && !raw {
			d.awaitMore(tail, shown)
		}
		time.Sleep(gap)
		return d.write([]byte("\r"))
	}
	return nil
}

// textTail is the last few characters of text's last line: what shows on
// screen once the whole text has landed.
func textTail(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := []rune(strings.TrimSpace(lines[len(lines)-1]))
	return string(last[max(len(last)-12, 0):])
}

// awaitMore waits, at most typedWait, until the screen shows tail more
// than n times (n = 0: at all).
func (d *ptyDriver) awaitMore(tail string, n int) bool {
	s := d.s
	deadline := time.Now().Add(typedWait)
	for {
		if strings.Count(d.term.Snapshot().Text(), tail) > n {
			return true
		}
		if time.Now().After(deadline) || s.isExited() {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Answer chooses optionID (or types text, where the prompt takes free text)
// on the prompt promptID, if and only if that prompt is on screen now. It
// waits, bounded, for the prompt to leave and returns the state after.
func (s *Session) Answer(promptID, optionID, text string) (State, error) {
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	if s.isExited() {
		return State{}, ErrExited
	}
	st, err := s.drv.answer(s.update(), promptID, optionID, text)
	var stale *StaleError
	if errors.As(err, &stale) && stale.Was == nil {
		s.mu.Lock()
		stale.Was = s.machine.recall(stale.Answered)
		s.mu.Unlock()
	}
	return st, err
}

// answer types the keys of optionID (or text) at the prompt promptID, if
// st, the state just decided, shows it blocked there.
func (d *ptyDriver) answer(st State, promptID, optionID, text string) (State, error) {
	s := d.s
	if st.Name != Blocked || st.Prompt == nil {
		return st, &StaleError{Answered: promptID}
	}
	if st.Prompt.ID != promptID {
		return st, &StaleError{Answered: promptID, Current: st.Prompt}
	}
	s.mu.Lock()
	already := s.machine.answered == promptID
	typed := s.machine.typedAt == promptID
	s.mu.Unlock()
	if already {
		return st, ErrAlreadyAnswer
	}
	if typed && st.Prompt.Positional && optionID != "" {
		// Arrows counted from where the prompt starts its selection would
		// choose another option if the person moved it.
		return st, ErrMovedByHand
	}
	if st, err := d.awaitSettled(st); err != nil {
		return st, err
	}
	var keys string
	switch {
	case optionID != "":
		opt, ok := st.Prompt.Option(optionID)
		if !ok {
			return st, ErrUnknownOption
		}
		if opt.Keys == "" {
			return st, ErrNotAnswerable
		}
		keys = opt.Keys
	case text != "" && st.Prompt.Freeform:
		keys = text + "\r"
	default:
		return st, ErrNotAnswerable
	}
	s.mu.Lock()
	s.machine.answering(promptID)
	s.mu.Unlock()
	if st.Prompt.Stepped && optionID != "" {
		if ok, err := d.stepKeys(st.Prompt, optionID, keys); err != nil || !ok {
			return d.notTaken(promptID), err
		}
		return d.awaitPromptGone(promptID, st.Prompt.Content), nil
	}
	if err := d.writeKeys(keys, st.Prompt.KeyGap); err != nil {
		return st, err
	}
	return d.awaitPromptGone(promptID, st.Prompt.Content), nil
}

// stepKeys types an option's keys at a Stepped prompt: one key at a time,
// each arrow once the screen shows the one before moved the selection,
// and the last key (Enter) only once the option is the selected one. It
// reports false, having typed no Enter, where the selection did not move
// within answerWait or stopped elsewhere: the keys did not take.
func (d *ptyDriver) stepKeys(p *detect.Prompt, optionID, keys string) (bool, error) {
	sel := selectedOption(p)
	steps := splitKeys(keys)
	for i, k := range steps {
		if i > 0 {
			time.Sleep(p.KeyGap)
		}
		if i == len(steps)-1 && sel != optionID {
			return false, nil
		}
		if err := d.write([]byte(k)); err != nil {
			return false, err
		}
		if i == len(steps)-1 {
			break
		}
		moved, ok := d.awaitSelectionMoved(p.Content, sel)
		if !ok {
			return false, nil
		}
		sel = moved
	}
	return true, nil
}

// awaitSelectionMoved waits, at most answerWait, until the prompt whose
// Content is content shows a selected option other than from, and returns
// it. A frame without the prompt is waited past: it may be one drawn
// halfway.
func (d *ptyDriver) awaitSelectionMoved(content, from string) (string, bool) {
	deadline := time.Now().Add(answerWait)
	for time.Now().Before(deadline) && !d.s.isExited() {
		v, _ := d.classifyNow()
		if v.Prompt != nil && v.Prompt.Content == content {
			if sel := selectedOption(v.Prompt); sel != from && sel != "" {
				return sel, true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", false
}

// selectedOption is the id of the prompt's selected option, "" when none is.
func selectedOption(p *detect.Prompt) string {
	for _, o := range p.Options {
		if o.Selected {
			return o.ID
		}
	}
	return ""
}

// notTaken reports the state after keys that did not choose the option:
// the prompt stays, and a retry of the same promptId goes through.
func (d *ptyDriver) notTaken(promptID string) State {
	st := d.s.update()
	if st.Prompt != nil && st.Prompt.ID == promptID {
		d.s.mu.Lock()
		d.s.machine.answerFailed()
		d.s.mu.Unlock()
	}
	return st
}

// writeKeys writes an answer's keys: at once, or with gap between one key
// (a character, or an escape sequence such as an arrow) and the next.
func (d *ptyDriver) writeKeys(keys string, gap time.Duration) error {
	if gap <= 0 {
		return d.write([]byte(keys))
	}
	for i, k := range splitKeys(keys) {
		if i > 0 {
			time.Sleep(gap)
		}
		if err := d.write([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// splitKeys cuts keys into single keys: a CSI or SS3 sequence ("\x1b[B",
// "\x1bOA") is one key, a lone Esc another, every other character one.
func splitKeys(keys string) []string {
	var out []string
	for i := 0; i < len(keys); {
		n := 1
		switch {
		case keys[i] == 0x1b && i+1 < len(keys) && (keys[i+1] == '[' || keys[i+1] == 'O'):
			n = 2
			for i+n < len(keys) && (keys[i+n] < 0x40 || keys[i+n] > 0x7e) {
				n++
			}
			n = min(n+1, len(keys)-i)
		case keys[i] >= 0x80:
			_, n = utf8.DecodeRuneInString(keys[i:])
		}
		out = append(out, keys[i:i+n])
		i += n
	}
	return out
}

// awaitSettled waits until the prompt has been on screen as long as its
// agent needs before it takes keys, then checks it is still the same one.
func (d *ptyDriver) awaitSettled(st State) (State, error) {
	s := d.s
	s.mu.Lock()
	wait := st.Prompt.Settle - time.Since(s.machine.promptAt)
	s.mu.Unlock()
	if wait <= 0 {
		return st, nil
	}
	time.Sleep(wait)
	fresh := s.update()
	if fresh.Name != Blocked || fresh.Prompt == nil || fresh.Prompt.ID != st.Prompt.ID {
		return fresh, &StaleError{Answered: st.Prompt.ID, Current: fresh.Prompt}
	}
	return fresh, nil
}

// awaitPromptGone classifies as the screen changes until the prompt
// promptID, whose Content is content, is no longer on screen, or
// answerWait passes.
func (d *ptyDriver) awaitPromptGone(promptID, content string) State {
	s := d.s
	deadline := time.Now().Add(answerWait)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if s.isExited() {
			break
		}
		v, _ := d.classifyNow()
		if v.Prompt == nil || v.Prompt.Content != content {
			break
		}
	}
	// Let the frame that replaced the prompt finish before reporting.
	time.Sleep(settle)
	st := s.update()
	if st.Prompt != nil && st.Prompt.ID == promptID {
		// The keys did not take: the same prompt is still there. Say so
		// (the caller sees the same promptId) and let a retry through.
		s.mu.Lock()
		s.machine.answerFailed()
		s.mu.Unlock()
	}
	return st
}
