package rpc

import (
	"context"

	"github.com/sourcegraph/jsonrpc2"
)

// send is runtime_send: programmatic input, refused while a prompt waits.
func (s *Server) send(_ context.Context, c *clientConn, req *jsonrpc2.Request) (any, error) {
	var p SendParams
	sess, err := s.session(req, &p, func() string { return p.SessionID })
	if err != nil {
		return nil, err
	}
	return nil, sess.Send(p.Text, p.Submit)
}

// answer is runtime_answer: answers the prompt on screen now, if it is the
// one the editor showed, and reports the state that followed.
func (s *Server) answer(_ context.Context, c *clientConn, req *jsonrpc2.Request) (any, error) {
	var p AnswerParams
	sess, err := s.session(req, &p, func() string { return p.SessionID })
	if err != nil {
		return nil, err
	}
	if p.PromptID == "" {
		return nil, &jsonrpc2.Error{Code: CodeInvalidParams, Message: "runtime_answer: params.promptId is required"}
	}
	if p.OptionID == "" && p.Text == "" {
		return nil, &jsonrpc2.Error{Code: CodeInvalidParams, Message: "runtime_answer: give params.optionId or params.text"}
	}
	st, err := sess.Answer(p.PromptID, p.OptionID, p.Text)
	if err != nil {
		return nil, err
	}
	return AnswerResult{State: st.Name, StateSource: st.Source, Reason: st.Reason, Prompt: st.Prompt}, nil
}
