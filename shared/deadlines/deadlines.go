// Package deadlines defines the service's time limits, from Lambda's deadline inward:
// each limit once, the ones derived from another computed from it. The template sets
// the outer ones (API Gateway's wait, each function's Timeout, the proxy's connect and
// borrow timeouts); the code derives everything inside a request from the invocation's
// deadline and these constants. docs/operations.md's table "Deadlines" lists the whole
// chain with the reason each limit exists, and infra/tests/samtemplate's
// TestDeadlineHierarchy holds that table, these constants and the transformed template
// to one another.
//
// Within a request the chain is: Lambda's deadline (the function's Timeout) > the
// work's end (LambdaMargin before it; the cleanups' Grace after the work's end, still
// before it) > the dependency budget (Budget: every dependency call of the request
// together) > each call's share (what is left of the budget, or less: a breaker's
// probe, the proxy's connect and borrow waits).
package deadlines

import "time"

const (
	// LambdaMargin is how long before the invocation's deadline a request's work ends,
	// so that its answer (a Response Model, a 503) is written before Lambda ends the
	// function, which would leave API Gateway a bare 502.
	LambdaMargin = time.Second

	// Grace is how long past the work's end what must still run once a request's
	// outcome is decided (removing objects no row points at, telling the cdn) may run:
	// half the margin, so the answer still comes before Lambda's deadline.
	Grace = LambdaMargin / 2

	// Budget is the time a request may wait on its dependencies, all its calls
	// together (concurrent calls count once; the request's own work, such as decoding
	// an upload, does not count). A request a dependency fails answers about Budget
	// after it began however many calls it makes; Budget and Grace fit in the shortest
	// function's work.
	Budget = 4 * time.Second

	// ProbeTimeout is the own deadline of a half-open breaker's probe call: a healthy
	// dependency answers in milliseconds, and a stalled one then holds one request for
	// this long per open period, not for the whole Budget.
	ProbeTimeout = time.Second

	// StatementTimeout is PostgreSQL's statement_timeout for the functions'
	// connections (sent on connecting, and set on each database role by make
	// db-roles): the database's own guard. Within a request the Budget ends the wait
	// for a statement first; statement_timeout then ends the statement on the server,
	// whatever became of its client (a connection lost through the proxy, a Lambda
	// container frozen between invocations).
	StatementTimeout = Budget + time.Second

	// CallTimeout is the functions' backstop for a database call that no request's
	// budget bounds: every call has a deadline whatever its caller brings (a readiness
	// check and a cleanup after the answer bring shorter ones). A second over
	// StatementTimeout, so that PostgreSQL ends a slow statement itself, with its own
	// error, and this deadline ends only what it cannot: a frozen server or network, a
	// proxy that never lends a connection.
	CallTimeout = StatementTimeout + time.Second

	// WriteTimeout is the local server's write timeout (make run, the tests' servers):
	// the net/http server closes a connection whose answer takes longer.
	WriteTimeout = 60 * time.Second

	// RequestTimeout is REQUEST_TIMEOUT's default and largest value: a request's work
	// ends this long after it arrived outside Lambda, five seconds below WriteTimeout,
	// so that a request that runs out of time is still answered. Under Lambda the
	// invocation's deadline less LambdaMargin binds first (every function's Timeout is
	// below it).
	RequestTimeout = WriteTimeout - 5*time.Second
)
