package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// MaxMessage bounds one incoming message; a larger one is skipped and
// answered with an error.
const MaxMessage = 8 << 20

// Stream is agentd's one framing codec: LSP base-protocol messages
// (Content-Length headers) over a byte stream. It implements
// jsonrpc2.ObjectStream. Unlike a plain codec it survives bad input: a
// message it cannot frame or parse is answered with a JSON-RPC error (id
// null when the id cannot be read) and reading goes on with the next one.
type Stream struct {
	r   *bufio.Reader
	w   io.Writer
	c   io.Closer
	max int

	wmu sync.Mutex
}

// NewStream is the codec on r and w (for jsonrpc2.NewConn): closing the
// connection closes c when it is not nil. Bad input is answered, by a
// server or a client alike, as the server answers a client's.
func NewStream(r io.Reader, w io.Writer, c io.Closer) *Stream {
	return &Stream{r: bufio.NewReaderSize(r, 64<<10), w: w, c: c, max: MaxMessage}
}

// frameError is a problem with one message; the stream itself is fine.
type frameError struct {
	code int
	msg  string
	id   json.RawMessage
}

func (e *frameError) Error() string { return e.msg }

func (s *Stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if fe, ok := err.(*frameError); ok {
			s.replyError(fe)
			continue
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, v); err != nil {
			s.replyError(classifyBadMessage(body, err))
			continue
		}
		return nil
	}
}

// classifyBadMessage tells JSON that does not parse from JSON that is not a
// JSON-RPC message, keeping the id when there is one.
func classifyBadMessage(body []byte, err error) *frameError {
	if !json.Valid(body) {
		return &frameError{code: CodeParseError, msg: "parse error: message is not valid JSON: " + err.Error()}
	}
	switch trimmed := bytes.TrimSpace(body); {
	case trimmed[0] == '[':
		return &frameError{code: CodeInvalidRequest, msg: "invalid request: batches (a JSON array) are not supported: send one message per frame"}
	case trimmed[0] != '{':
		return &frameError{code: CodeInvalidRequest, msg: "invalid request: a message must be a JSON object"}
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &probe)
	if id := bytes.TrimSpace(probe.ID); len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		// JSON-RPC: an id that cannot be read (an object, an array, a
		// bool) is answered as null.
		probe.ID = nil
	}
	return &frameError{code: CodeInvalidRequest, msg: "invalid request: " + err.Error(), id: probe.ID}
}

func (s *Stream) readFrame() ([]byte, error) {
	length := -1
	sawHeader := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line != "" {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank lines between messages
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, &frameError{code: CodeParseError, msg: fmt.Sprintf("malformed header line %q: want \"Content-Length: N\"", clip(line))}
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, &frameError{code: CodeParseError, msg: fmt.Sprintf("bad Content-Length %q", clip(strings.TrimSpace(value)))}
			}
			length = n
		}
	}
	if length < 0 {
		return nil, &frameError{code: CodeParseError, msg: "message without a Content-Length header"}
	}
	if length > s.max {
		if _, err := io.CopyN(io.Discard, s.r, int64(length)); err != nil {
			return nil, err
		}
		return nil, &frameError{code: CodeInvalidRequest, msg: fmt.Sprintf("message of %d bytes is over the limit of %d", length, s.max)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func (s *Stream) replyError(fe *frameError) {
	id := fe.id
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": fe.code, "message": fe.msg},
	})
	_ = s.writeRaw(msg)
}

func (s *Stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeRaw(data)
}

func (s *Stream) writeRaw(data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	header := "Content-Length: " + strconv.Itoa(len(data)) + "\r\n\r\n"
	if _, err := io.WriteString(s.w, header); err != nil {
		return err
	}
	_, err := s.w.Write(data)
	return err
}

func (s *Stream) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

// ReadMessage reads one framed message body from r: what a forwarder needs
// to look at the first messages before it only copies bytes.
func ReadMessage(r *bufio.Reader) ([]byte, error) {
	st := &Stream{r: r, max: MaxMessage}
	return st.readFrame()
}

// WriteMessage writes body as one framed message.
func WriteMessage(w io.Writer, body []byte) error {
	st := &Stream{w: w}
	return st.writeRaw(body)
}
