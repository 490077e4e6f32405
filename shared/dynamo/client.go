package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/mediacatalog/service/shared/awsapi"
	"github.com/mediacatalog/service/shared/config"
)

// Client speaks DynamoDB's JSON protocol (version 2012-08-10): one signed POST per
// operation, named by the X-Amz-Target header (see awsapi for why not the SDK's
// client). It carries the three item operations the stores use (PutItem, UpdateItem,
// DeleteItem), and checks the CRC32 that DynamoDB sends with every answer.
type Client struct {
	api *awsapi.Client
}

// NewClient returns a client for cfg.AWSRegion. With cfg.DynamoEndpoint set (dynalite
// locally and in tests) it talks to that endpoint, signing with placeholder
// credentials unless the environment has AWS credentials.
func NewClient(cfg config.Config) *Client {
	return &Client{api: awsapi.New("dynamodb", cfg.AWSRegion, cfg.DynamoEndpoint, os.Getenv)}
}

// retryCodes are DynamoDB's error codes that another attempt may get past.
var retryCodes = map[string]bool{
	"ThrottlingException": true, "ProvisionedThroughputExceededException": true, "RequestLimitExceeded": true,
	"InternalServerError": true, "ServiceUnavailable": true, "TransactionInProgressException": true,
}

// call runs one operation: in is encoded as the request body, the answer decoded
// into out.
func (c *Client) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", op, err)
	}
	resp, err := c.api.Do(ctx, awsapi.Request{
		Method: http.MethodPost,
		URL:    c.api.Endpoint() + "/",
		Header: http.Header{
			"Content-Type": {"application/x-amz-json-1.0"},
			"X-Amz-Target": {"DynamoDB_20120810." + op},
		},
		Body: body,
	}, check)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("%s: decode the answer: %w", op, err)
	}
	return nil
}

// check verifies the answer's CRC32 and reads DynamoDB's error body:
// {"__type": "<namespace>#<Code>", "message": ...}.
func check(resp *awsapi.Response) error {
	if want := resp.Header.Get("X-Amz-Crc32"); want != "" {
		if n, err := strconv.ParseUint(want, 10, 32); err != nil || uint32(n) != crc32.ChecksumIEEE(resp.Body) {
			return &awsapi.Error{Status: resp.Status, Code: "CRC32CheckFailed", Retryable: true,
				Message: "the body does not match its X-Amz-Crc32"}
		}
	}
	if resp.Status == http.StatusOK {
		return nil
	}
	var body struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		Message2 string `json:"Message"`
	}
	if json.Unmarshal(resp.Body, &body) != nil || body.Type == "" {
		return awsapi.Unexpected(resp)
	}
	code := body.Type[strings.LastIndexByte(body.Type, '#')+1:] // the name after the namespace
	msg := body.Message
	if msg == "" {
		msg = body.Message2
	}
	return &awsapi.Error{Status: resp.Status, Code: code, Message: msg, Retryable: retryCodes[code]}
}

// value is one attribute value in DynamoDB's JSON form. The stores keep strings and
// numbers only; other types decode as empty.
type value struct {
	S *string `json:"S,omitempty"`
	N *string `json:"N,omitempty"`
}

// item is an item or a key: attribute name to value.
type item map[string]value

func str(s string) value { return value{S: &s} }

func num(n int64) value {
	s := strconv.FormatInt(n, 10)
	return value{N: &s}
}

// str returns the string attribute name ("" when absent or of another type).
func (it item) str(name string) string {
	if v, ok := it[name]; ok && v.S != nil {
		return *v.S
	}
	return ""
}

// num returns the number attribute name as an integer.
func (it item) num(name string) (int64, error) {
	v, ok := it[name]
	if !ok || v.N == nil {
		return 0, fmt.Errorf("attribute %s missing or not a number", name)
	}
	n, err := strconv.ParseInt(*v.N, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("attribute %s: %w", name, err)
	}
	return n, nil
}

// The requests and responses of the three operations, as far as the stores use them.
type (
	putItemInput struct {
		TableName           string
		Item                item
		ConditionExpression string `json:",omitempty"`
	}
	updateItemInput struct {
		TableName                 string
		Key                       item
		UpdateExpression          string
		ExpressionAttributeValues item   `json:",omitempty"`
		ReturnValues              string `json:",omitempty"`
	}
	deleteItemInput struct {
		TableName           string
		Key                 item
		ConditionExpression string `json:",omitempty"`
		ReturnValues        string `json:",omitempty"`
	}
	itemOutput struct {
		Attributes item
	}
)
