package tracer

// AddSink adds a sink to a tracer that may already be in use; events
// emitted after it returns reach the sink too, in Seq order.
func (t *Tracer) AddSink(s Sink) {
	t.mu.Lock()
	t.sinks = append(t.sinks, s)
	t.mu.Unlock()
}
