package cdn

import (
	"context"
	"sync"
)

// refReads reads users' image references, one query per read, sharing a query among
// the concurrent requests for one user: a popular avatar asked for by many clients at
// once (a CloudFront miss across edges, a local server under load) costs one query per
// query time instead of one per request.
//
// A request only ever joins a query that starts after it arrived, never one already
// running: a running query may have read the reference before a change that committed
// since, and a request that arrives after the change call returned must see the
// change. So each user has at most one running query and one pending one; requests
// arriving while a query runs wait for the pending one, which starts when the running
// one ends.
type refReads struct {
	users Users
	mu    sync.Mutex
	slots map[int64]*refSlot
}

type refSlot struct {
	running, pending *refCall
}

// refCall is one query and those waiting for it.
type refCall struct {
	ctx  context.Context // of the request that started it
	done chan struct{}
	ref  string
	err  error
}

func newRefReads(users Users) *refReads {
	return &refReads{users: users, slots: map[int64]*refSlot{}}
}

// userImage returns user id's image reference as a query that started after the call
// read it ("" for none; apperr.NotFound for an unknown user).
func (rr *refReads) userImage(ctx context.Context, id int64) (string, error) {
	rr.mu.Lock()
	s := rr.slots[id]
	if s == nil {
		s = &refSlot{}
		rr.slots[id] = s
	}
	if s.running == nil {
		call := &refCall{ctx: ctx, done: make(chan struct{})}
		s.running = call
		rr.mu.Unlock()
		rr.run(id, s, call)
		return call.ref, call.err
	}
	call := s.pending
	if call == nil {
		call = &refCall{ctx: ctx, done: make(chan struct{})}
		s.pending = call
	}
	rr.mu.Unlock()
	select {
	case <-call.done:
		return call.ref, call.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// run queries for call, then starts the pending query, if any, on a goroutine of its
// own (the caller's request is answered meanwhile).
func (rr *refReads) run(id int64, s *refSlot, call *refCall) {
	call.ref, call.err = rr.users.UserImage(call.ctx, id)
	close(call.done)
	rr.mu.Lock()
	next := s.pending
	s.running, s.pending = next, nil
	if next == nil {
		delete(rr.slots, id)
	}
	rr.mu.Unlock()
	if next != nil {
		go rr.run(id, s, next)
	}
}
