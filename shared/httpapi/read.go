package httpapi

import (
	"context"
	"net/http"
)

// Read serves a read route: parse takes what the request names (an id, a client...)
// or answers 400, load fetches it, and the result is a 200 JSON body. Every error
// goes through Error.
func Read[K, T any](parse func(*http.Request) (K, error), load func(context.Context, K) (T, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := parse(r)
		if err != nil {
			Error(w, r, err)
			return
		}
		v, err := load(r.Context(), key)
		if err != nil {
			Error(w, r, err)
			return
		}
		JSON(w, r, http.StatusOK, v)
	})
}

// ReadAll serves a read route that takes no parameter.
func ReadAll[T any](load func(context.Context) (T, error)) http.Handler {
	return Read(func(*http.Request) (struct{}, error) { return struct{}{}, nil },
		func(ctx context.Context, _ struct{}) (T, error) { return load(ctx) })
}

// PathID parses the positive integer path value "id" (400 otherwise).
func PathID(r *http.Request) (int64, error) { return PathInt(r, "id") }
