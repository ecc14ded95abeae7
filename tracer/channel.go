package tracer

import (
	"context"
	"sync"
)

// ChannelSink forwards events to a channel read by one consumer, such as
// the goroutine that passes them to the TUI with Program.Send.
//
// No event is dropped: Write never blocks and never discards, because an
// unbounded queue sits between Write and the channel; a forwarding
// goroutine moves events from the queue to C in Seq order. After Close, the
// forwarder delivers every event still queued and then closes C. Only when
// ctx is cancelled (the consumer has gone away) does the forwarder stop
// early, close C and leave queued events undelivered.
type ChannelSink struct {
	ctx    context.Context
	out    chan *Event
	signal chan struct{} // capacity 1: the queue is non-empty or closed
	done   chan struct{} // closed when the forwarder has exited

	mu     sync.Mutex
	queue  []*Event
	spare  []*Event
	closed bool
}

// NewChannelSink starts the forwarder, which runs until Close has been
// called and everything queued is delivered, or until ctx is cancelled.
func NewChannelSink(ctx context.Context) *ChannelSink {
	s := &ChannelSink{
		ctx:    ctx,
		out:    make(chan *Event, 64),
		signal: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	go s.forward()
	return s
}

// C returns the channel events arrive on. It is closed when the forwarder
// stops.
func (s *ChannelSink) C() <-chan *Event { return s.out }

// Done is closed when the forwarder has stopped.
func (s *ChannelSink) Done() <-chan struct{} { return s.done }

// Write queues e for the consumer. It never blocks on the consumer.
func (s *ChannelSink) Write(e *Event) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.wake()
	return nil
}

func (s *ChannelSink) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// Flush does nothing: events are handed on as soon as the consumer takes
// them.
func (s *ChannelSink) Flush() error { return nil }

// Close stops accepting events; the forwarder delivers the queued ones and
// closes C. Close does not wait for the consumer.
func (s *ChannelSink) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
	return nil
}

func (s *ChannelSink) forward() {
	defer close(s.done)
	defer close(s.out)
	var batch []*Event
	for {
		s.mu.Lock()
		batch, s.queue = s.queue, s.spare[:0]
		closed := s.closed
		s.mu.Unlock()
		for i, e := range batch {
			select {
			case s.out <- e:
				batch[i] = nil
			case <-s.ctx.Done():
				return
			}
		}
		s.spare = batch
		if closed && len(batch) == 0 {
			return
		}
		if len(batch) > 0 {
			continue // more may have arrived meanwhile
		}
		select {
		case <-s.signal:
		case <-s.ctx.Done():
			return
		}
	}
}
