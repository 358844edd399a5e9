package rpc

import (
	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/protocol"
)

// What detect and acp hold, as the protocol's types (rpc/protocol): the
// wire carries the fields a person reads, never how agentd types an
// answer (an option's keys, a prompt's timing).

func wirePrompt(p *detect.Prompt) *protocol.Prompt {
	if p == nil {
		return nil
	}
	out := &protocol.Prompt{ID: p.ID, Kind: p.Kind, Question: p.Question, Subject: wireSubject(p.Subject),
		Options: make([]protocol.Option, len(p.Options)), Freeform: p.Freeform}
	for i, o := range p.Options {
		out.Options[i] = protocol.Option{ID: o.ID, Label: o.Label, Description: o.Description, Kind: o.Kind, Selected: o.Selected}
	}
	return out
}

func wireSubject(s *detect.Subject) *protocol.Subject {
	if s == nil {
		return nil
	}
	return &protocol.Subject{Kind: s.Kind, Text: s.Text, Detail: s.Detail, Truncated: s.Truncated}
}

func wireEvidence(e detect.Evidence) protocol.Evidence {
	return protocol.Evidence{Region: e.Region, Text: e.Text}
}

func wireAuthMethods(ms []acp.AuthMethod) []protocol.AuthMethod {
	out := make([]protocol.AuthMethod, len(ms))
	for i, m := range ms {
		out[i] = protocol.AuthMethod{ID: m.ID, Name: m.Name, Description: m.Description, Type: m.Type, Vars: m.Vars,
			Command: m.Command, Args: m.Args, Env: m.Env, Label: m.Label}
	}
	return out
}
