package soak

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The route classes the answers are counted by.
const (
	ClassPublic     = "public read" // tags, publishers, publications
	ClassAvatar     = "avatar"      // GET /user/avatar/...
	ClassAdminRead  = "admin read"
	ClassAdminWrite = "admin write" // adds, edits, logout
	ClassUpload     = "upload"      // a user's image, a contributor's avatar
	ClassDelete     = "delete"      // every DELETE
	ClassOAuth      = "oauth"       // /auth/oauth/...
)

// Classes lists the classes in the report's order.
var Classes = []string{ClassPublic, ClassAvatar, ClassAdminRead, ClassAdminWrite, ClassUpload, ClassDelete, ClassOAuth}

// outcome is one answer the workload did not expect, or one check of an expected
// answer that failed.
type outcome struct {
	Class  string    `json:"class"`
	Route  string    `json:"route"`  // the route's pattern, or the check's name
	Status int       `json:"status"` // 0: no answer (a transport error); -1: a failed check
	Detail string    `json:"detail"` // the body's start, the error, or what the check saw
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
}

// window is a fault's time, from its start to the moment it ended (PostgreSQL thawed,
// or answering again after its restart).
type window struct {
	Name       string    `json:"name"`
	Start, End time.Time `json:"-"`
}

// maxKept bounds the unexpected outcomes kept for the report; more are counted.
const maxKept = 100000

// recorder counts every answer by class and status, and keeps the unexpected ones
// with their times, to be judged against the fault windows at the end.
type recorder struct {
	mu         sync.Mutex
	counts     map[string]map[int]int64
	unexpected []outcome
	overflow   int64 // unexpected outcomes beyond maxKept
	windows    []window
	answered   atomic.Int64
	surprises  atomic.Int64
}

func newRecorder() *recorder {
	return &recorder{counts: map[string]map[int]int64{}}
}

// answer counts one answer (status 0: none came); o is its outcome when unexpected.
func (r *recorder) answer(class string, status int, o *outcome) {
	r.answered.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	byStatus := r.counts[class]
	if byStatus == nil {
		byStatus = map[int]int64{}
		r.counts[class] = byStatus
	}
	byStatus[status]++
	if o != nil {
		r.keep(*o)
	}
}

// failedCheck records a check of an expected answer that did not hold.
func (r *recorder) failedCheck(o outcome) {
	o.Status = -1
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keep(o)
}

// failedFlow records an OAuth flow's error redirect: an answer counted already (302, as
// expected), whose Location carries the flow's failure.
func (r *recorder) failedFlow(o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keep(o)
}

func (r *recorder) keep(o outcome) {
	r.surprises.Add(1)
	if len(r.unexpected) < maxKept {
		r.unexpected = append(r.unexpected, o)
	} else {
		r.overflow++
	}
}

func (r *recorder) fault(w window) {
	r.mu.Lock()
	r.windows = append(r.windows, w)
	r.mu.Unlock()
}

// judged is the recorder's final account: the unexpected outcomes split by whether
// they overlap a fault window extended by grace, where a missing or 5xx answer, an
// OAuth flow's error redirect and a failed check are the fault's doing.
type judged struct {
	Counts  map[string]map[int]int64
	Outside []outcome // unexpected outside every window: each fails the soak
	Inside  []outcome // the faults' doing
	// Overflow counts unexpected outcomes beyond maxKept, which fail the soak.
	Overflow int64
	Windows  []window
}

func (r *recorder) judge(grace time.Duration) judged {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := judged{Counts: map[string]map[int]int64{}, Overflow: r.overflow, Windows: slices.Clone(r.windows)}
	for c, m := range r.counts {
		j.Counts[c] = map[int]int64{}
		for s, n := range m {
			j.Counts[c][s] = n
		}
	}
	for _, o := range r.unexpected {
		if faultShaped(o) && overlaps(o, r.windows, grace) {
			j.Inside = append(j.Inside, o)
		} else {
			j.Outside = append(j.Outside, o)
		}
	}
	return j
}

// faultShaped is what a database fault may cause: no answer, a 5xx, an OAuth flow that
// ends in an error redirect (Status 302 here only when unexpected), a check that saw
// what a fault leaves behind (a stale picture, a write that was not made).
func faultShaped(o outcome) bool {
	return o.Status <= 0 || o.Status >= 500 || o.Class == ClassOAuth && o.Status == 302
}

func overlaps(o outcome, ws []window, grace time.Duration) bool {
	for _, w := range ws {
		if !o.Start.After(w.End.Add(grace)) && !o.End.Before(w.Start) {
			return true
		}
	}
	return false
}
