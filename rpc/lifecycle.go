package rpc

import (
	"context"

	"github.com/sourcegraph/jsonrpc2"
)

func (s *Server) initialize(_ context.Context, req *jsonrpc2.Request) (any, error) {
	var p InitializeParams
	if req.Params != nil {
		if err := decode(req, &p); err != nil {
			return nil, err
		}
	}
	if p.ClientInfo != nil {
		s.log.Info("editor connected", "client", p.ClientInfo.Name, "version", p.ClientInfo.Version)
	}
	res := InitializeResult{ServerInfo: ClientInfo{Name: "agentd", Version: s.version}, ProtocolVersion: ProtocolVersion, Agents: []AgentInfo{}}
	for _, m := range s.mgr.Rules().Manifests() {
		res.Agents = append(res.Agents, AgentInfo{Name: m.Name, Display: m.Display, Process: m.Identify.Process})
	}
	return res, nil
}

// shutdown ends every session; the editor then sends exit.
func (s *Server) shutdown(context.Context, *jsonrpc2.Request) (any, error) {
	s.mgr.Shutdown()
	return nil, nil
}
