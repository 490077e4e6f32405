package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
)

// MaxSafeInteger is the default limit of the paged lists: JavaScript's largest safe
// integer, as the OpenAPI document gives it.
const MaxSafeInteger int64 = 9007199254740991

// Page is the paging window of a list.
type Page struct {
	Limit  int64
	Offset int64
}

// Envelope returns max, from and to of a paged response: max is the number of all
// matching rows as the store counted it (a lower bound past a search's threshold, which
// the envelope's max_exact tells), from the offset, to the offset plus the number of
// items returned.
func (p Page) Envelope(total int64, returned int) (max, from, to int64) {
	return total, p.Offset, p.Offset + int64(returned)
}

// PathInt parses a positive integer path value; anything else is 400.
func PathInt(r *http.Request, name string) (int64, error) {
	return parsePositive(r.PathValue(name))
}

// PathString returns a non-blank path value; blank is 400.
func PathString(r *http.Request, name string) (string, error) {
	v := strings.TrimSpace(r.PathValue(name))
	if v == "" {
		return "", apperr.MissingParams()
	}
	return v, nil
}

// Client parses the required numeric client query parameter.
func Client(r *http.Request) (int64, error) {
	return parsePositive(r.URL.Query().Get("client"))
}

// Paging parses limit (default MaxSafeInteger) and offset (default 0); negative or
// non-numeric values are 400.
func Paging(r *http.Request) (Page, error) {
	q := r.URL.Query()
	p := Page{Limit: MaxSafeInteger}
	var err error
	if v := q.Get("limit"); v != "" {
		if p.Limit, err = parseNonNegative(v); err != nil {
			return Page{}, err
		}
		p.Limit = min(p.Limit, MaxSafeInteger)
	}
	if v := q.Get("offset"); v != "" {
		if p.Offset, err = parseNonNegative(v); err != nil {
			return Page{}, err
		}
		p.Offset = min(p.Offset, MaxSafeInteger)
	}
	return p, nil
}

// Order returns the order query parameter when it is one of allowed, def when absent;
// any other value is 400.
func Order(r *http.Request, def string, allowed ...string) (string, error) {
	v := r.URL.Query().Get("order")
	if v == "" {
		return def, nil
	}
	if !slices.Contains(allowed, v) {
		return "", apperr.MissingParams()
	}
	return v, nil
}

// parsePositive accepts an id in canonical form only: ASCII digits, no sign, no
// spaces, no leading zero, greater than zero and within int64 (every id column is
// bigint). "+1", "01", " 1" and "1 " are not 1: each id has one spelling.
func parsePositive(s string) (int64, error) {
	n, ok := CanonicalID(s)
	if !ok {
		return 0, apperr.MissingParams()
	}
	return n, nil
}

// CanonicalID parses s when it is a positive integer in canonical form (see
// parsePositive).
func CanonicalID(s string) (int64, bool) {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

func parseNonNegative(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		// Numbers beyond int64 are still numbers: clamp them to the largest safe integer.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !strings.HasPrefix(strings.TrimSpace(s), "-") {
			return MaxSafeInteger, nil
		}
		return 0, apperr.MissingParams()
	}
	if n < 0 {
		return 0, apperr.MissingParams()
	}
	return n, nil
}
