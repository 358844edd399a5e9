package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// DefaultMaxLine bounds one message from the agent (file contents and
// images travel inside messages, so it is generous).
const DefaultMaxLine = 64 << 20

// lineStream is a jsonrpc2.ObjectStream speaking ACP's framing: one JSON
// object per line, in both directions. A line that is not a JSON-RPC
// message (a stray print on the agent's stdout, a truncated write) is
// logged and skipped; only the end of the stream or a read error ends it.
// A line longer than max is skipped whole.
type lineStream struct {
	r   *bufio.Reader
	in  io.Closer // the agent's stdout
	out io.WriteCloser
	log *slog.Logger
	max int

	wmu sync.Mutex
}

func newLineStream(in io.ReadCloser, out io.WriteCloser, log *slog.Logger, max int) *lineStream {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineStream{r: bufio.NewReaderSize(in, 64<<10), in: in, out: out, log: log, max: max}
}

// WriteObject writes obj as one line. encoding/json escapes control
// characters inside strings, so the line holds no raw newline.
func (s *lineStream) WriteObject(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.out.Write(b)
	return err
}

// ReadObject reads lines until one decodes into v.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := s.readLine()
		if errors.Is(err, errLineTooLong) {
			s.log.Warn("acp: skipped an over-long line from the agent", "limit", s.max)
			continue
		}
		if len(line) == 0 && err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			if !json.Valid(line) {
				s.log.Warn("acp: skipped a line that is not JSON", "bytes", len(line))
				s.log.Debug("acp: the line that is not JSON", "line", clip(line))
			} else if uerr := json.Unmarshal(line, v); uerr != nil {
				s.log.Warn("acp: skipped a line that is not a JSON-RPC message", "error", uerr, "bytes", len(line))
				s.log.Debug("acp: the line that is not a JSON-RPC message", "line", clip(line))
			} else {
				return nil
			}
		}
		if err != nil {
			return err
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. At the end of the
// stream it returns what was left (maybe nothing) with the error.
func (s *lineStream) readLine() ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		frag, err := s.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > s.max+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, frag...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if tooLong || len(buf) > s.max { // a last line without its newline
				return nil, err
			}
			return buf, err
		}
	}
}

func (s *lineStream) Close() error {
	err := s.out.Close()
	if e := s.in.Close(); err == nil {
		err = e
	}
	return err
}

// clip shortens a line for the log.
func clip(b []byte) string {
	const n = 200
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
