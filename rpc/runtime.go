package rpc

import (
	"context"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// send is protocol.MethodSend: programmatic input, refused while a prompt waits.
func (s *Server) send(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SendParams) (none, error) {
	return nil, sess.Send(p.Text, p.Submit)
}

// answer is protocol.MethodAnswer: answers the prompt on screen now, if it is the
// one the editor showed, and reports the state that followed.
func (s *Server) answer(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.AnswerParams) (*protocol.AnswerResult, error) {
	if p.PromptID == "" {
		return nil, invalidParams(protocol.MethodAnswer, "params.promptId is required")
	}
	if p.OptionID == "" && p.Text == "" {
		return nil, invalidParams(protocol.MethodAnswer, "give params.optionId or params.text")
	}
	st, err := sess.Answer(p.PromptID, p.OptionID, p.Text)
	if err != nil {
		return nil, err
	}
	return &protocol.AnswerResult{State: st.Name, StateSource: st.Source, Reason: st.Reason, Prompt: wirePrompt(st.Prompt)}, nil
}
