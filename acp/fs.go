package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sourcegraph/jsonrpc2"
)

// maxReadFile bounds fs/read_text_file (the answer has to fit in one line).
const maxReadFile = 32 << 20

// confined is file access limited to one folder. Paths are checked twice:
// lexically against the folder (so "..", and absolute paths elsewhere, are
// refused with a clear message), then opened through an os.Root, which
// refuses any symlink that leads out of the folder, at the moment of use.
type confined struct {
	dir  string // as configured, cleaned
	real string // with symlinks resolved
	root *os.Root
}

func newConfined(dir string) (*confined, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &confined{dir: filepath.Clean(dir), real: real, root: root}, nil
}

func (f *confined) close() { _ = f.root.Close() }

// errOutside marks a path refused for leaving the session folder.
var errOutside = errors.New("outside the session folder")

// rel maps a path from the agent to one relative to the folder. Relative
// paths are taken relative to the folder.
func (f *confined) rel(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path holds a NUL byte")
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(f.dir, abs)
	}
	abs = filepath.Clean(abs)
	for _, base := range []string{f.dir, f.real} {
		r, err := filepath.Rel(base, abs)
		if err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			return r, nil
		}
	}
	return "", fmt.Errorf("%s is %w %s", p, errOutside, f.dir)
}

// explain rewrites an os.Root error about escaping into a plain sentence.
func (f *confined) explain(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "escapes from parent"):
		return fmt.Errorf("%s leads %w %s (through a symlink)", p, errOutside, f.dir)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no such file: %s: %w", p, fs.ErrNotExist)
	}
	return err
}

func (f *confined) read(p string, line, limit *int) (string, error) {
	r, err := f.rel(p)
	if err != nil {
		return "", err
	}
	st, err := f.root.Stat(r)
	if err != nil {
		return "", f.explain(p, err)
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s is a folder", p)
	}
	if st.Size() > maxReadFile {
		return "", fmt.Errorf("%s is larger than %d bytes", p, maxReadFile)
	}
	b, err := f.root.ReadFile(r)
	if err != nil {
		return "", f.explain(p, err)
	}
	text := string(b)
	if line == nil && limit == nil {
		return text, nil
	}
	lines := strings.SplitAfter(text, "\n")
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(lines))
	}
	end := len(lines)
	if limit != nil && *limit >= 0 {
		end = min(start+*limit, len(lines))
	}
	return strings.Join(lines[start:end], ""), nil
}

func (f *confined) write(p, content string) error {
	r, err := f.rel(p)
	if err != nil {
		return err
	}
	if r == "." {
		return fmt.Errorf("%s is the session folder itself", p)
	}
	if d := filepath.Dir(r); d != "." {
		if err := f.root.MkdirAll(d, 0o755); err != nil {
			return f.explain(p, err)
		}
	}
	return f.explain(p, f.root.WriteFile(r, []byte(content), 0o644))
}

// serveFS answers fs/read_text_file and fs/write_text_file.
func (c *Client) serveFS(id jsonrpc2.ID, method string, params json.RawMessage) {
	var (
		result any
		err    error
		path   string
	)
	switch method {
	case sdk.ClientMethodFsReadTextFile:
		var req sdk.ReadTextFileRequest
		if err = json.Unmarshal(params, &req); err == nil {
			path = req.Path
			var text string
			text, err = c.fs.read(req.Path, req.Line, req.Limit)
			result = sdk.ReadTextFileResponse{Content: text}
		}
	case sdk.ClientMethodFsWriteTextFile:
		var req sdk.WriteTextFileRequest
		if err = json.Unmarshal(params, &req); err == nil {
			path = req.Path
			err = c.fs.write(req.Path, req.Content)
			result = sdk.WriteTextFileResponse{}
		}
	}
	if err == nil {
		c.log.Debug("acp: served "+method, "path", path)
		c.reply(id, result, nil)
		return
	}
	c.log.Info("acp: refused "+method, "path", path, "error", err)
	code := int64(jsonrpc2.CodeInternalError)
	switch {
	case errors.Is(err, errOutside):
		code = jsonrpc2.CodeInvalidParams
	case errors.Is(err, fs.ErrNotExist):
		code = codeResourceNotFound
	case path == "":
		code = jsonrpc2.CodeInvalidParams
	}
	c.reply(id, nil, &jsonrpc2.Error{Code: code, Message: method + ": " + err.Error()})
}
