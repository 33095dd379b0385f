package bridge

import "github.com/ttalk/mcpbridge/internal/redact"

// Instructions returns the instructions the server sent in its initialize or server/discover
// result ("" if none), cleaned: invalid UTF-8 repaired, control and format characters
// escaped, at most MaxInstructionsBytes plus a note on what was cut. They are the server's
// own words — untrusted text. InstructionsPrompt puts them into a system prompt framed as
// such.
func (s *Server) Instructions() string {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	return s.status.Instructions
}

// InstructionsPrompt renders the instructions of servers (those that sent any, in the order
// given) as one system-prompt section: a heading, a line telling the model that the text
// comes from the servers and does not override the host's instructions, then one block per
// server naming its ID and, where known, its name and version. It returns "" when no server
// sent instructions. A server's text cannot close its own block: any "</server-instructions"
// in it is escaped.
//
//	system += bridge.InstructionsPrompt(set.Servers())
func InstructionsPrompt(servers []*Server) string {
	var texts []redact.ServerText
	for _, s := range servers {
		if s != nil {
			st := s.Status()
			texts = append(texts, redact.ServerText{ID: s.ID(), Name: st.ServerName, Version: st.ServerVersion, Text: st.Instructions})
		}
	}
	return redact.InstructionsPrompt(texts) // internal/redact: the framing of untrusted text
}
