package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrInvalidState is returned by Consume for a state token that is unknown, already
// consumed, expired or malformed.
var ErrInvalidState = errors.New("dynamo: invalid OAuth state")

// Flow is the OAuth flow a state token was issued for.
type Flow string

const (
	FlowLogin Flow = "login"
	FlowLink  Flow = "link"
)

// State is a server-side OAuth state token and what it is bound to.
type State struct {
	Token     string
	Provider  string
	Flow      Flow
	UserID    string // the user being linked; empty in the login flow
	Verifier  string // PKCE code verifier
	ExpiresAt time.Time
}

// stateItem is State as stored; expires_at is unix seconds, the table's TTL attribute.
type stateItem struct {
	Token     string `dynamodbav:"pk"`
	Provider  string `dynamodbav:"provider"`
	Flow      Flow   `dynamodbav:"flow"`
	UserID    string `dynamodbav:"user_id,omitempty"`
	Verifier  string `dynamodbav:"verifier,omitempty"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// maxTokenLen bounds what Consume sends to DynamoDB: NewToken makes 43 characters, and
// a client-supplied state of any other shape is simply invalid.
const maxTokenLen = 128

// NewToken returns a fresh state token: 32 random bytes, base64url without padding.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand.Read crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b)
}

// StateStore keeps OAuth state tokens, each usable once.
type StateStore struct {
	client *dynamodb.Client
	table  string
}

// NewStateStore returns a store over the given table.
func NewStateStore(client *dynamodb.Client, table string) *StateStore {
	return &StateStore{client: client, table: table}
}

// Put stores a state. ExpiresAt is kept to the second. A token already stored is an
// error, never an overwrite.
func (s *StateStore) Put(ctx context.Context, st State) error {
	if err := st.validate(); err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	item, err := attributevalue.MarshalMap(stateItem{
		Token:     st.Token,
		Provider:  st.Provider,
		Flow:      st.Flow,
		UserID:    st.UserID,
		Verifier:  st.Verifier,
		ExpiresAt: st.ExpiresAt.Unix(),
	})
	if err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	return nil
}

func (st State) validate() error {
	switch {
	case !validToken(st.Token):
		return errors.New("malformed token")
	case st.Provider == "":
		return errors.New("provider missing")
	case st.Flow != FlowLogin && st.Flow != FlowLink:
		return fmt.Errorf("unknown flow %q", st.Flow)
	case st.Flow == FlowLink && st.UserID == "":
		return errors.New("link flow without a user")
	case st.ExpiresAt.IsZero():
		return errors.New("expiry missing")
	}
	return nil
}

// Consume deletes the state and returns it, in one conditional delete, so a token
// works once however many requests race with it. An unknown, consumed, expired or
// malformed token yields ErrInvalidState.
func (s *StateStore) Consume(ctx context.Context, token string) (State, error) {
	if !validToken(token) {
		return State{}, ErrInvalidState
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:           aws.String(s.table),
		Key:                 map[string]types.AttributeValue{attrKey: &types.AttributeValueMemberS{Value: token}},
		ConditionExpression: aws.String("attribute_exists(pk)"),
		ReturnValues:        types.ReturnValueAllOld,
	})
	var notFound *types.ConditionalCheckFailedException
	if errors.As(err, &notFound) {
		return State{}, ErrInvalidState
	}
	if err != nil {
		return State{}, fmt.Errorf("dynamo: consume OAuth state: %w", err)
	}
	var it stateItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return State{}, fmt.Errorf("dynamo: consume OAuth state: decode: %w", err)
	}
	st := State{
		Token:     it.Token,
		Provider:  it.Provider,
		Flow:      it.Flow,
		UserID:    it.UserID,
		Verifier:  it.Verifier,
		ExpiresAt: time.Unix(it.ExpiresAt, 0),
	}
	// TTL deletion lags by up to days: an expired item may still be there.
	if !time.Now().Before(st.ExpiresAt) {
		return State{}, ErrInvalidState
	}
	return st, nil
}

// validToken accepts 1 to maxTokenLen characters of the base64url alphabet.
func validToken(token string) bool {
	if token == "" || len(token) > maxTokenLen {
		return false
	}
	for _, c := range []byte(token) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}
