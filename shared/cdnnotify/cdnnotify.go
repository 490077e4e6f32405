// Package cdnnotify tells the cdn function that a user's profile image changed (the
// internal call of POST /user/avatar/change/{id}): over HTTP, or by invoking the
// function through the SDK's Lambda client. Only admin-users links it, so the other
// image function (admin-contributors) does not link the Lambda client.
package cdnnotify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/lambdahttp"
)

// notifyTimeout bounds one notification, a cold start of the cdn function included.
const notifyTimeout = 10 * time.Second

// changePath is the cdn route that a notification calls.
func changePath(userID int64) string { return "/user/avatar/change/" + strconv.FormatInt(userID, 10) }

// Notifier is what NewNotifier returns: an HTTPNotifier or a LambdaNotifier, either of
// which serves as the avatars service's Notifier (declared there, by the package that
// calls it, so that this one needs nothing of the avatars service).
type Notifier interface {
	AvatarChanged(ctx context.Context, userID int64) error
}

// Options say how to reach the cdn function (from config's AvatarNotifier, CDNURL,
// CDNFunctionName and LambdaEndpoint).
type Options struct {
	Kind           string       // "http" or "lambda"
	URL            string       // http: the API's base URL
	Client         *http.Client // http: the client (http.DefaultClient when nil)
	Function       string       // lambda: the cdn function's name
	LambdaEndpoint string       // lambda: Lambda's endpoint ("" in AWS; tests point it at a stand-in)
}

// NewNotifier returns the notifier o.Kind names: "lambda" invokes o.Function with a
// client of awsCfg, "http" posts to o.URL.
func NewNotifier(awsCfg aws.Config, o Options) (Notifier, error) {
	switch o.Kind {
	case "lambda":
		return NewLambdaNotifier(awsCfg, o.Function, o.LambdaEndpoint)
	case "http":
		return NewHTTPNotifier(o.URL, o.Client)
	}
	return nil, fmt.Errorf("cdnnotify: AVATAR_NOTIFIER %q is neither http nor lambda", o.Kind)
}

// HTTPNotifier posts to the cdn routes over HTTP (the local stack). A change is
// idempotent (the cdn checks its invalidation ledger), so a caller may simply call again.
type HTTPNotifier struct {
	base   string
	client *http.Client
}

// NewHTTPNotifier returns a notifier posting to baseURL + /user/avatar/change/<id>.
func NewHTTPNotifier(baseURL string, client *http.Client) (*HTTPNotifier, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("cdnnotify: CDN_URL %q is not an http(s) URL", baseURL)
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &HTTPNotifier{base: strings.TrimRight(baseURL, "/"), client: client}, nil
}

// AvatarChanged posts the change; anything but a 200 is an error.
func (n *HTTPNotifier) AvatarChanged(ctx context.Context, userID int64) error {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	target := n.base + changePath(userID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return fmt.Errorf("notify avatar change of user %d: %w", userID, err)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("notify avatar change of user %d: %w", userID, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("notify avatar change of user %d: POST %s answered %d: %s",
			userID, target, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// LambdaNotifier invokes the cdn function directly (AWS) through the SDK's Lambda
// client, with the API Gateway v2 event that POST /user/avatar/change/<id> would bring.
// The invocation is synchronous (RequestResponse), so that a failing cdn function is
// seen and logged by the caller rather than lost in the asynchronous queue; it takes a
// few milliseconds when the function is warm. The SDK's retryer retries a throttled
// or failed invocation: the change is idempotent.
type LambdaNotifier struct {
	client   *lambda.Client
	function string
	now      func() time.Time
}

// NewLambdaNotifier returns a notifier invoking function with awsCfg
// (awsconfig.Load). endpoint overrides Lambda's ("" in AWS; tests point it at a
// stand-in).
func NewLambdaNotifier(awsCfg aws.Config, function, endpoint string) (*LambdaNotifier, error) {
	if function == "" {
		return nil, errors.New("cdnnotify: CDN_FUNCTION_NAME is required when AVATAR_NOTIFIER=lambda")
	}
	client := lambda.NewFromConfig(awsCfg, func(o *lambda.Options) {
		o.BaseEndpoint = awsconfig.BaseEndpoint(endpoint)
	})
	return &LambdaNotifier{client: client, function: function, now: time.Now}, nil
}

// AvatarChanged invokes the cdn function and checks the status its response carries.
func (n *LambdaNotifier) AvatarChanged(ctx context.Context, userID int64) error {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("notify avatar change of user %d: "+format, append([]any{userID}, args...)...)
	}
	id := strconv.FormatInt(userID, 10)
	now := n.now()
	payload, err := lambdahttp.Call{
		Method:         http.MethodPost,
		RouteKey:       "POST /user/avatar/change/{id}",
		Path:           changePath(userID),
		PathParameters: map[string]string{"id": id},
		UserAgent:      "media-catalog-avatars",
		RequestID:      "avatar-change-" + id + "-" + strconv.FormatInt(now.UnixNano(), 36),
		Time:           now,
	}.Event()
	if err != nil {
		return fail("encode event: %w", err)
	}
	out, err := n.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(n.function),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return fail("invoke %s: %w", n.function, err)
	}
	if fe := aws.ToString(out.FunctionError); fe != "" {
		return fail("%s failed (%s): %.500s", n.function, fe, out.Payload)
	}
	status, body, err := lambdahttp.DecodeResponse(out.Payload)
	if err != nil {
		return fail("%s: %w", n.function, err)
	}
	if status != http.StatusOK {
		return fail("%s answered %d: %.500s", n.function, status, body)
	}
	return nil
}
