package lambdahttp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Call is a request one function sends straight to another (Lambda Invoke) as the
// API Gateway HTTP API (payload 2.0) event its route would bring, so that the callee's
// Lambda entry serves it like any request. It has no body.
type Call struct {
	Method         string
	RouteKey       string // the route's pattern, e.g. "POST /user/avatar/change/{id}"
	Path           string
	PathParameters map[string]string
	Query          url.Values        // the query string, if any
	Header         map[string]string // more headers, by lower-case name
	Cookies        []string          // "name=value" each
	UserAgent      string
	RequestID      string
	Time           time.Time
}

// Event encodes c as the event's JSON.
func (c Call) Event() ([]byte, error) { return json.Marshal(c.Request()) }

// Request is c as the event API Gateway would bring.
func (c Call) Request() events.APIGatewayV2HTTPRequest {
	var query map[string]string
	for k, v := range c.Query {
		if query == nil {
			query = map[string]string{}
		}
		query[k] = strings.Join(v, ",") // as API Gateway joins a repeated parameter
	}
	headers := map[string]string{"user-agent": c.UserAgent, "content-length": "0"}
	for k, v := range c.Header {
		headers[k] = v
	}
	return events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              c.RouteKey,
		RawPath:               c.Path,
		RawQueryString:        c.Query.Encode(),
		Cookies:               c.Cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        c.PathParameters,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:  c.RouteKey,
			Stage:     "$default",
			RequestID: c.RequestID,
			Time:      c.Time.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch: c.Time.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    c.Method,
				Path:      c.Path,
				Protocol:  "HTTP/1.1",
				SourceIP:  "127.0.0.1",
				UserAgent: c.UserAgent,
			},
		},
	}
}

// DecodeResponse reads a function's answer to such an event: its status and body.
func DecodeResponse(payload []byte) (status int, body string, err error) {
	var out events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &out); err != nil {
		return 0, "", fmt.Errorf("decode the function's response: %w", err)
	}
	return out.StatusCode, out.Body, nil
}
