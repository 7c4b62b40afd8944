package agentserver

// UseEventsSocket makes the conversation follow its events on the events
// socket even where the session socket is served.
func UseEventsSocket(o *Options) { o.eventsSocket = true }

// Repeats counts the events not delivered because they were already.
func (c *Conversation) Repeats() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.repeats
}

// OnEventsSocket reports whether the conversation is followed on the
// events socket.
func (c *Conversation) OnEventsSocket() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events
}
