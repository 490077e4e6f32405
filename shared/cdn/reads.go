package cdn

import (
	"context"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
)

// refReads reads users' image references for the avatar route. A reference read is
// reused for maxAge from the moment its query started, and the change call waits
// maxAge before it invalidates CloudFront and answers (handleChange): the change is
// committed before that call arrives, so once it returns every container's reads
// started after the commit, and none serves the replaced or removed picture. maxAge
// bounds by how much a change call is slower, and makes a hot avatar cost one query
// per maxAge per container instead of one per request.
//
// Concurrent reads of one user share a query, and a request joins only a query that
// starts after it arrived, never one already running (which may predate a change):
// each user has at most one running query and one pending one, which starts when the
// running one ends.
type refReads struct {
	users  Users
	maxAge time.Duration // 0: every request reads
	now    func() time.Time
	// staleFor is how long a read reference may still be served when the database
	// cannot confirm it (stale); 0: never.
	staleFor time.Duration
	// maxFresh bounds the reads remembered (fresh), whatever the users asked for:
	// DefaultMaxRemembered.
	maxFresh int

	mu      sync.Mutex
	slots   map[int64]*refSlot
	fresh   map[int64]readRef
	sweptAt time.Time
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
	// forgotten: a change call for the user came while the query ran (forget), so what
	// it read may be the replaced reference, and is not remembered.
	forgotten bool
}

// readRef is a reference and when the query that read it started.
type readRef struct {
	ref   string
	start time.Time
}

func newRefReads(users Users, maxAge time.Duration, now func() time.Time) *refReads {
	return &refReads{users: users, maxAge: maxAge, now: now, maxFresh: DefaultMaxRemembered,
		slots: map[int64]*refSlot{}, fresh: map[int64]readRef{}}
}

// userImage returns user id's image reference ("" for none; apperr.NotFound for an
// unknown user), read by a query that started less than maxAge ago when reuse is set,
// else by one that starts after this call.
func (rr *refReads) userImage(ctx context.Context, id int64, reuse bool) (string, error) {
	rr.mu.Lock()
	if e, ok := rr.fresh[id]; ok && reuse && rr.young(e.start) {
		rr.mu.Unlock()
		return e.ref, nil
	}
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

// young reports whether a read that started at start may still be used. Both the
// monotonic and the wall clock must say so: the monotonic one is immune to clock
// steps, and the wall clock still advances should a frozen execution environment's
// monotonic clock not have.
func (rr *refReads) young(start time.Time) bool { return rr.within(start, rr.maxAge) }

// within reports whether less than d passed since start, by both clocks (young).
func (rr *refReads) within(start time.Time, d time.Duration) bool {
	now := rr.now()
	wall := now.Round(0).Sub(start.Round(0))
	return now.Sub(start) < d && wall >= 0 && wall < d
}

// kept is how long a read is remembered: for reuse, and for stale.
func (rr *refReads) kept() time.Duration { return max(rr.maxAge, rr.staleFor) }

// stale returns the reference last read for user id when the read that failed with
// err could not reach the database (an error without a client-facing code: a timeout,
// an open breaker) and that read started less than staleFor ago. The cdn then serves
// the picture it holds through a database stall.
func (rr *refReads) stale(id int64, err error) (string, bool) {
	if apperr.CodeOf(err) != apperr.Internal {
		return "", false
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	e, ok := rr.fresh[id]
	if !ok || !rr.within(e.start, rr.staleFor) {
		return "", false
	}
	return e.ref, true
}

// forget drops what is remembered of user id, and what the query running for the user
// will read (it may have read the row before the change committed): the change call's
// container serves nothing stale of a changed picture. A pending query starts after
// this, so what it reads is remembered.
func (rr *refReads) forget(id int64) {
	rr.mu.Lock()
	delete(rr.fresh, id)
	if s := rr.slots[id]; s != nil && s.running != nil {
		s.running.forgotten = true
	}
	rr.mu.Unlock()
}

// run queries for call, then starts the pending query, if any, on a goroutine of its
// own (the caller's request is answered meanwhile).
func (rr *refReads) run(id int64, s *refSlot, call *refCall) {
	start := rr.now()
	// The query serves every request waiting for it, so the end of the one that started
	// it (a client gone) does not cancel it; the database call's own deadline bounds it,
	// and each waiter stops waiting at its own deadline.
	call.ref, call.err = rr.users.UserImage(context.WithoutCancel(call.ctx), id)
	close(call.done)
	rr.mu.Lock()
	switch {
	case call.forgotten:
	case call.err == nil && rr.kept() > 0:
		rr.remember(id, readRef{ref: call.ref, start: start})
	case apperr.CodeOf(call.err) != apperr.Internal:
		// The database answered (User not found): what was read before is not the
		// user's picture any more, and a stall must not bring it back.
		delete(rr.fresh, id)
	}
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

// remember records user id's read, within maxFresh users: when full, an arbitrary
// other user's read goes (the first the map's iteration gives), which costs that user
// one more query, and through a stall the stale answer it would have had.
func (rr *refReads) remember(id int64, e readRef) {
	if _, ok := rr.fresh[id]; !ok && len(rr.fresh) >= rr.maxFresh {
		for other := range rr.fresh {
			delete(rr.fresh, other)
			break
		}
	}
	rr.fresh[id] = e
	rr.sweep()
}

// sweep forgets the reads too old to use, at most once per kept.
func (rr *refReads) sweep() {
	if rr.within(rr.sweptAt, rr.kept()) {
		return
	}
	for id, e := range rr.fresh {
		if !rr.within(e.start, rr.kept()) {
			delete(rr.fresh, id)
		}
	}
	rr.sweptAt = rr.now()
}
