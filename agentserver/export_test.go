package agentserver

// UseEventsSocket makes the conversation follow its events on the events
// socket even where the session socket is served.
func UseEventsSocket(o *Options) { o.eventsSocket = true }

// Repeats counts the events not delivered because they were already.
func (s *Conversation) Repeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repeats
}

// OnEventsSocket reports whether the conversation is followed on the
// events socket.
func (s *Conversation) OnEventsSocket() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events
}
