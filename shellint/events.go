package shellint

import (
	"sync"
)

// State is a terminal's lifecycle state as reported to clients.
type State string

const (
	StateStarting State = "starting"
	StateIdle     State = "idle"
	StateRunning  State = "running"
	StateDead     State = "dead"
)

// Mode says how much of the shell integration is working, so clients know
// what to trust: "integrated" (markers, user rc loaded), "norc" (markers,
// user rc skipped because it broke startup) or "fallback" (one `bash -c` per
// command; cwd and exported variables are carried over by files, but shell
// functions, aliases and background jobs do not survive a command).
type Mode string

const (
	ModeIntegrated Mode = "integrated"
	ModeNoRC       Mode = "norc"
	ModeFallback   Mode = "fallback"
)

// Event is one entry of a terminal's live stream: exactly one of Output,
// Text and State is set. Events of one terminal are delivered in the order
// they happened, so a State "idle" follows the Output and the Text that
// carried the command's end.
type Event struct {
	TerminalID string
	Output     *OutputEvent
	Text       *TextEvent
	State      *StateEvent
}

// OutputEvent carries raw PTY bytes for live mirroring, escape sequences and
// integration markers included. Offset is the position of Data[0] in the
// terminal's byte stream. Lost > 0 means that many bytes right before
// Offset were dropped because this subscriber fell behind; Data may then be
// empty (a pure gap report).
type OutputEvent struct {
	Offset int64
	Data   []byte
	Lost   int64
}

// TextEvent is a command's output as the agent reads it, for a view of the
// command (a card, a progress line) that must not parse the raw stream
// again: only what the command printed between its start and end marks,
// whose nonce the terminal checked (a look-alike a program prints is
// text), with escape sequences stripped and "\r\n" folded to "\n"; a lone
// "\r" stays, for a view to redraw its line. It follows the OutputEvent
// that carried the same bytes. Lost > 0 means that many bytes of text
// right before this were dropped because the subscriber fell behind.
type TextEvent struct {
	Seq  int // the command's sequence number (StateEvent.Seq)
	Text string
	Lost int64
}

// StateEvent reports a state change. Seq and ExitCode refer to the command
// that started or finished; ExitCode is nil unless one finished.
type StateEvent struct {
	State State
	// Name is the terminal's name ("OpenHands tools: claude-code"), so a
	// mirror can be titled before the first output.
	Name      string
	Mode      Mode
	Seq       int
	Command   string
	ExitCode  *int
	Cwd       string
	AltScreen bool
	Reason    string
}

// defaultSubscriberBuffer bounds the raw bytes queued for one slow
// subscriber before chunks are dropped (and counted).
const defaultSubscriberBuffer = 8 << 20

// subscriber delivers events to fn on its own goroutine so the PTY reader
// never waits for a consumer. The queue is bounded in bytes; output that
// does not fit is dropped and reported as Lost on the next delivered event,
// keeping the stream in order. State events are small and never dropped.
type subscriber struct {
	fn    func(Event)
	limit int64

	mu       sync.Mutex
	queue    []Event
	queued   int64
	lost     int64
	lostEnd  int64 // stream offset just after the last lost byte
	lostText int64 // command text dropped since the last TextEvent queued
	closing  bool  // deliver what is queued, then stop
	canceled bool
	wake     chan struct{}
	done     chan struct{}
}

func newSubscriber(fn func(Event), limit int64) *subscriber {
	if limit <= 0 {
		limit = defaultSubscriberBuffer
	}
	s := &subscriber{fn: fn, limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *subscriber) push(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.canceled || s.closing {
		return
	}
	if t := ev.Text; t != nil {
		if s.queued+int64(len(t.Text)) > s.limit {
			s.lostText += int64(len(t.Text))
			return
		}
		if s.lostText > 0 {
			ev.Text = &TextEvent{Seq: t.Seq, Text: t.Text, Lost: s.lostText}
			s.lostText = 0
		}
		s.queued += int64(len(t.Text))
	} else if o := ev.Output; o != nil {
		if s.queued+int64(len(o.Data)) > s.limit {
			s.lost += int64(len(o.Data))
			s.lostEnd = o.Offset + int64(len(o.Data))
			return
		}
		if s.lost > 0 {
			o = &OutputEvent{Offset: o.Offset, Data: o.Data, Lost: s.lost}
			ev.Output = o
			s.lost = 0
		}
		s.queued += int64(len(o.Data))
	} else if s.lost > 0 {
		s.queue = append(s.queue, Event{TerminalID: ev.TerminalID, Output: &OutputEvent{Offset: s.lostEnd, Lost: s.lost}})
		s.lost = 0
	}
	s.queue = append(s.queue, ev)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		stop := s.canceled || (s.closing && len(batch) == 0)
		s.mu.Unlock()
		if stop {
			return
		}
		if len(batch) == 0 {
			<-s.wake
			continue
		}
		for _, ev := range batch {
			s.mu.Lock()
			canceled := s.canceled
			if ev.Output != nil {
				s.queued -= int64(len(ev.Output.Data))
			}
			if ev.Text != nil {
				s.queued -= int64(len(ev.Text.Text))
			}
			s.mu.Unlock()
			if canceled {
				return
			}
			s.fn(ev)
		}
	}
}

// cancel stops delivery at once.
func (s *subscriber) cancel() {
	s.mu.Lock()
	s.canceled = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// close delivers what is queued, then stops.
func (s *subscriber) close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
