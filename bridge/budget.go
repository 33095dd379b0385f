package bridge

// messageLimit is the transport's per-message limit for o (0 keeps the transport default).
func (o *options) messageLimit() int { return o.MaxMessageBytes }
