package providertest

// maxGrants bounds what a stand-in remembers of the codes and access tokens it issued,
// each: make run serves for hours and every login or link leaves a code and a token
// (and, at google, mockoidc's session) behind. The service redeems a code within
// seconds of its issue and uses the token at once, so only the newest matter; an older
// one is then unknown, as an expired one is (invalid_grant, 401).
const maxGrants = 1024

// recent is a map that forgets its oldest keys beyond max entries. Keys are the
// stand-in's random codes and tokens, never put twice.
type recent[V any] struct {
	m     map[string]V
	order []string // a ring of the keys, oldest at next once full
	next  int
}

func newRecent[V any](max int) *recent[V] {
	return &recent[V]{m: make(map[string]V, max), order: make([]string, max)}
}

// put stores v under k, forgetting the oldest key when full; it returns that key
// ("" when none was forgotten).
func (r *recent[V]) put(k string, v V) (forgotten string) {
	forgotten = r.order[r.next]
	if forgotten != "" {
		delete(r.m, forgotten)
	}
	r.order[r.next] = k
	r.next = (r.next + 1) % len(r.order)
	r.m[k] = v
	return forgotten
}

func (r *recent[V]) get(k string) (V, bool) {
	v, ok := r.m[k]
	return v, ok
}

// take returns and forgets k's value.
func (r *recent[V]) take(k string) (V, bool) {
	v, ok := r.m[k]
	delete(r.m, k)
	return v, ok
}

func (r *recent[V]) len() int { return len(r.m) }
