package awsconfig

import (
	"context"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/aws/smithy-go/middleware"

	"github.com/mediacatalog/service/shared/dependency"
)

// breakers are the breakers of one configuration's clients, one per AWS service (by
// the SDK's service id: "S3", "DynamoDB", "CloudFront", "Lambda"), made on first use.
type breakers struct {
	mu sync.Mutex
	m  map[string]*dependency.Breaker
}

func (bs *breakers) get(service string) *dependency.Breaker {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.m[service]
	if b == nil {
		b = dependency.NewBreaker(strings.ToLower(service), nil)
		bs.m[service] = b
	}
	return b
}

// guard puts every operation of the clients made from the configuration through its
// service's breaker (dependency.Breaker.Begin), outside the SDK's retries: an operation,
// all its attempts together, is one call, bounded by the request's budget.
func guard() func(*middleware.Stack) error {
	bs := &breakers{m: map[string]*dependency.Breaker{}}
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("DependencyBreaker",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				callCtx, end, err := bs.get(middleware.GetServiceID(ctx)).Begin(ctx, 0)
				if err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
				out, md, err := next.HandleInitialize(callCtx, in)
				if err == nil && streamed(out.Result, end) {
					return out, md, nil
				}
				end(err)
				return out, md, err
			}), middleware.Before)
	}
}

// streamed hands the end of the call to the Body of an output that streams it (S3's
// GetObject): the body is read with the call's context after the operation returns, so
// the call ends when the body is closed.
func streamed(result any, end func(error)) bool {
	v := reflect.ValueOf(result)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("Body")
	if !f.IsValid() || !f.CanSet() || f.Type() != reflect.TypeFor[io.ReadCloser]() || f.IsNil() {
		return false
	}
	f.Set(reflect.ValueOf(io.ReadCloser(&endOnClose{ReadCloser: f.Interface().(io.ReadCloser), end: end})))
	return true
}

type endOnClose struct {
	io.ReadCloser
	end  func(error)
	read error
}

func (b *endOnClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.read == nil {
		b.read = err
	}
	return n, err
}

func (b *endOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.end(b.read)
	return err
}
