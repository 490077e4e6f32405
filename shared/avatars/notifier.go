package avatars

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/shared/awsapi"
	"github.com/mediacatalog/service/shared/config"
)

// Notifier tells the cdn function that a user's profile image changed, so that it
// drops its cached copies and invalidates CloudFront: the internal call of
// POST /user/avatar/change/{id}.
type Notifier interface {
	AvatarChanged(ctx context.Context, userID int64) error
}

// notifyTimeout bounds one notification, a cold start of the cdn function included.
const notifyTimeout = 10 * time.Second

// changePath is the cdn route that a notification calls.
func changePath(userID int64) string { return "/user/avatar/change/" + strconv.FormatInt(userID, 10) }

// NewNotifier returns the notifier cfg.AvatarNotifier names: "lambda" invokes
// cfg.CDNFunctionName, "http" posts to cfg.CDNURL. client is the HTTP client of the
// http notifier (http.DefaultClient when nil).
func NewNotifier(ctx context.Context, cfg config.Config, client *http.Client) (Notifier, error) {
	switch cfg.AvatarNotifier {
	case "lambda":
		return NewLambdaNotifier(cfg, "", nil)
	case "http":
		return NewHTTPNotifier(cfg.CDNURL, client)
	}
	return nil, fmt.Errorf("avatars: AVATAR_NOTIFIER %q is neither http nor lambda", cfg.AvatarNotifier)
}

// HTTPNotifier posts to the cdn routes over HTTP (the local stack).
type HTTPNotifier struct {
	base   string
	client *http.Client
}

// NewHTTPNotifier returns a notifier posting to baseURL + /user/avatar/change/<id>.
func NewHTTPNotifier(baseURL string, client *http.Client) (*HTTPNotifier, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("avatars: CDN_URL %q is not an http(s) URL", baseURL)
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

// LambdaNotifier invokes the cdn function directly (AWS), with the API Gateway v2
// event that POST /user/avatar/change/<id> would bring. The invocation is synchronous
// (RequestResponse), so that a failing cdn function is seen and logged by the caller
// rather than lost in the asynchronous queue; it takes a few milliseconds when the
// function is warm. A throttled or failed invocation is retried (awsapi): the change
// is idempotent.
//
// It speaks Lambda's Invoke API (POST /2015-03-31/functions/<name>/invocations) as a
// signed request rather than through the SDK's lambda client: that client's
// initialisation alone cost admin-users 4 ms of every cold start, for one call.
type LambdaNotifier struct {
	api      *awsapi.Client
	function string
	now      func() time.Time
}

// NewLambdaNotifier returns a notifier invoking cfg.CDNFunctionName in cfg.AWSRegion.
// endpoint overrides Lambda's regional endpoint (tests point it at a stand-in); client
// is the HTTP client (one with a timeout when nil).
func NewLambdaNotifier(cfg config.Config, endpoint string, client *http.Client) (*LambdaNotifier, error) {
	if cfg.CDNFunctionName == "" {
		return nil, errors.New("avatars: CDN_FUNCTION_NAME is required when AVATAR_NOTIFIER=lambda")
	}
	if client == nil {
		client = &http.Client{Timeout: notifyTimeout}
	}
	return &LambdaNotifier{
		api:      awsapi.New("lambda", cfg.AWSRegion, endpoint, os.Getenv, awsapi.WithHTTPClient(client)),
		function: cfg.CDNFunctionName,
		now:      time.Now,
	}, nil
}

// AvatarChanged invokes the cdn function and checks the status its response carries.
func (n *LambdaNotifier) AvatarChanged(ctx context.Context, userID int64) error {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("notify avatar change of user %d: "+format, append([]any{userID}, args...)...)
	}
	payload, err := json.Marshal(changeEvent(userID, n.now()))
	if err != nil {
		return fail("encode event: %w", err)
	}
	resp, err := n.api.Do(ctx, awsapi.Request{
		Method: http.MethodPost,
		URL:    n.api.Endpoint() + "/2015-03-31/functions/" + url.PathEscape(n.function) + "/invocations",
		Header: http.Header{"Content-Type": {"application/json"}, "X-Amz-Invocation-Type": {"RequestResponse"}},
		Body:   payload,
	}, checkInvoke)
	if err != nil {
		return fail("invoke %s: %w", n.function, err)
	}
	if fe := resp.Header.Get("X-Amz-Function-Error"); fe != "" {
		return fail("%s failed (%s): %.500s", n.function, fe, resp.Body)
	}
	var out events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return fail("decode the response of %s: %w", n.function, err)
	}
	if out.StatusCode != http.StatusOK {
		return fail("%s answered %d: %.500s", n.function, out.StatusCode, out.Body)
	}
	return nil
}

// checkInvoke reads the Invoke API's errors: the code in X-Amzn-Errortype, a JSON
// body with the message.
func checkInvoke(resp *awsapi.Response) error {
	if resp.Status == http.StatusOK {
		return nil
	}
	code, _, _ := strings.Cut(resp.Header.Get("X-Amzn-Errortype"), ":")
	if code == "" {
		return awsapi.Unexpected(resp)
	}
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(resp.Body, &body)
	return &awsapi.Error{Status: resp.Status, Code: code, Message: body.Message,
		Retryable: code == "TooManyRequestsException" || code == "ServiceException"}
}

// changeEvent is the API Gateway HTTP API (payload 2.0) event of
// POST /user/avatar/change/<id>, as the cdn function's adapter expects it.
func changeEvent(userID int64, now time.Time) events.APIGatewayV2HTTPRequest {
	const route = "POST /user/avatar/change/{id}"
	path := changePath(userID)
	id := strconv.FormatInt(userID, 10)
	return events.APIGatewayV2HTTPRequest{
		Version:        "2.0",
		RouteKey:       route,
		RawPath:        path,
		Headers:        map[string]string{"user-agent": "media-catalog-avatars", "content-length": "0"},
		PathParameters: map[string]string{"id": id},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:  route,
			Stage:     "$default",
			RequestID: "avatar-change-" + id + "-" + strconv.FormatInt(now.UnixNano(), 36),
			Time:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    http.MethodPost,
				Path:      path,
				Protocol:  "HTTP/1.1",
				SourceIP:  "127.0.0.1",
				UserAgent: "media-catalog-avatars",
			},
		},
	}
}
