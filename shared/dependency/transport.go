package dependency

import (
	"context"
	"io"
	"net/http"
)

// Transport is an http.RoundTripper whose requests go through a breaker: the OAuth
// providers' client uses one per provider. A request's round trip (to the response's
// header) is the call; an HTTP error status is an answer. The call's deadline goes on
// until the response's body is closed.
type Transport struct {
	Base    http.RoundTripper // http.DefaultTransport when nil
	Breaker *Breaker
}

// RoundTrip sends req through the breaker.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	call, err := t.Breaker.Start(req.Context(), 0)
	if err != nil {
		return nil, err
	}
	res, err := base.RoundTrip(req.WithContext(call.Context()))
	call.Report(err)
	if err != nil {
		call.cancel()
		return nil, err
	}
	res.Body = &cancelOnClose{ReadCloser: res.Body, cancel: call.cancel}
	return res, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
