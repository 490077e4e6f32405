package dynamo_test

import (
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/awsapi/awsapitest"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/dynamo"
)

// answer is one response of the DynamoDB stand-in below.
type answer struct {
	status int
	body   string
	crc    string // X-Amz-Crc32; "" computes the right one, "none" sends none
}

// counterBody is UpdateItem's answer with a counter of 1.
const counterBody = `{"Attributes":{"hits":{"N":"1"},"expires_at":{"N":"1700000000"}}}`

func throttled() answer {
	return answer{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`, ""}
}

// standIn serves DynamoDB's JSON protocol answers in turn (the last one repeats),
// checks each request's protocol headers and SigV4 signature, and counts requests.
type standIn struct {
	t       *testing.T
	mu      sync.Mutex
	answers []answer
	calls   int
	targets []string
	url     string
}

func newStandIn(t *testing.T, answers ...answer) *standIn {
	s := &standIn{t: t, answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *standIn) config() config.Config {
	return config.Config{AWSRegion: "eu-central-1", DynamoEndpoint: s.url}
}

func (s *standIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	s.targets = append(s.targets, r.Header.Get("X-Amz-Target"))
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("Content-Type") != "application/x-amz-json-1.0" {
		s.t.Errorf("request %s %s, content type %q: not DynamoDB's JSON protocol", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	awsapitest.VerifySignature(s.t, r, body, "dynamodb", "eu-central-1")
	if a.crc == "" {
		a.crc = strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(a.body))), 10)
	}
	if a.crc != "none" {
		w.Header().Set("X-Amz-Crc32", a.crc)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func (s *standIn) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func TestClientRetries(t *testing.T) {
	tests := []struct {
		name      string
		answers   []answer
		wantCalls int
		wantErr   string // "" for success
	}{
		{"success", []answer{{200, counterBody, ""}}, 1, ""},
		{"throttled, then admitted", []answer{throttled(), throttled(), {200, counterBody, ""}}, 3, ""},
		{"throttled three times", []answer{throttled()}, 3, "ThrottlingException"},
		{"server error, then admitted", []answer{{500, `{"__type":"com.amazon.coral.service#InternalFailure"}`, ""}, {200, counterBody, ""}}, 2, ""},
		{"proxy error page", []answer{{502, `<html>Bad Gateway</html>`, ""}}, 3, "Bad Gateway"},
		{"corrupt body, then a good one", []answer{{200, counterBody, "12345"}, {200, counterBody, ""}}, 2, ""},
		{"validation error is not retried", []answer{{400, `{"__type":"com.amazon.coral.validate#ValidationException","message":"The provided key element does not match the schema"}`, ""}}, 1, "ValidationException"},
		{"missing table is not retried", []answer{{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}`, ""}}, 1, "ResourceNotFoundException"},
		{"no checksum header", []answer{{200, counterBody, "none"}}, 1, ""},
		{"answer without a counter", []answer{{200, `{"Attributes":{}}`, ""}}, 1, "counter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStandIn(t, tt.answers...)
			limiter, err := dynamo.NewRateLimiter(dynamo.NewClient(s.config()), "rate", 20, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			d, err := limiter.Allow(context.Background(), "198.51.100.1")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Allow: %v", err)
			case tt.wantErr == "" && (!d.Allowed || d.Remaining != 19):
				t.Errorf("decision %+v: want allowed with 19 remaining", d)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Allow: err = %v, want one naming %q", err, tt.wantErr)
			}
			if got := s.count(); got != tt.wantCalls {
				t.Errorf("%d requests, want %d", got, tt.wantCalls)
			}
			if s.targets[0] != "DynamoDB_20120810.UpdateItem" {
				t.Errorf("X-Amz-Target %q", s.targets[0])
			}
		})
	}
}

// A refused connection is retried, and the caller learns of it well within the rate
// limiter's time bound.
func TestClientConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	limiter, err := dynamo.NewRateLimiter(dynamo.NewClient(config.Config{AWSRegion: "eu-central-1", DynamoEndpoint: dead}), "rate", 20, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := limiter.Allow(context.Background(), "198.51.100.1"); err == nil {
		t.Fatal("Allow succeeded against a closed port")
	}
}

// A cancelled context ends the retries at once.
func TestClientContext(t *testing.T) {
	s := newStandIn(t, throttled())
	store := dynamo.NewStateStore(dynamo.NewClient(s.config()), "state")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := store.Consume(ctx, dynamo.NewToken())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Consume with a cancelled context: %v", err)
	}
}

// DeleteItem's conditional failure is an invalid state, not an infrastructure error,
// and a consumed item is read back from DynamoDB's attribute values.
func TestStateStoreWireFormat(t *testing.T) {
	expires := time.Now().Add(5 * time.Minute).Unix()
	tok := dynamo.NewToken()
	s := newStandIn(t,
		answer{200, `{"Attributes":{"pk":{"S":"` + tok + `"},"provider":{"S":"github"},"flow":{"S":"link"},"user_id":{"S":"7"},"verifier":{"S":"v"},"expires_at":{"N":"` + strconv.FormatInt(expires, 10) + `"}}}`, ""},
		answer{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`, ""},
	)
	store := dynamo.NewStateStore(dynamo.NewClient(s.config()), "state")
	st, err := store.Consume(context.Background(), tok)
	if err != nil {
		t.Fatalf("Consume: %v", err)
	}
	want := dynamo.State{Token: tok, Provider: "github", Flow: dynamo.FlowLink, UserID: "7", Verifier: "v", ExpiresAt: time.Unix(expires, 0)}
	if st != want {
		t.Errorf("Consume = %+v, want %+v", st, want)
	}
	if _, err := store.Consume(context.Background(), tok); !errors.Is(err, dynamo.ErrInvalidState) {
		t.Errorf("second Consume: %v, want ErrInvalidState", err)
	}
	if got := s.count(); got != 2 {
		t.Errorf("%d requests, want 2 (a failed condition is not retried)", got)
	}
}
