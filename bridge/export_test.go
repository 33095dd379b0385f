package bridge

// CallPaths returns how many tools/call of s took the direct path and go-sdk's.
func (s *Server) CallPaths() (direct, sdk int64) {
	return s.pool.Paths().Direct.Load(), s.pool.Paths().SDK.Load()
}

// UserDirectCalls returns how many users' tools/call of s went on the shared connection of
// a stateless server with the user's OAuth handler.
func (s *Server) UserDirectCalls() int64 { return s.pool.Paths().UserDirect.Load() }

// UserStates returns how many users s keeps state for (handler, session, catalogue).
func (s *Server) UserStates() int {
	return s.pool.UserStates()
}
