package bridge

// CallPaths returns how many tools/call of s took the direct path and go-sdk's.
func (s *Server) CallPaths() (direct, sdk int64) { return s.paths.direct.Load(), s.paths.sdk.Load() }
