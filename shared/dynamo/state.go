package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mediacatalog/service/shared/catalog"
)

// maxTokenLen bounds what Consume sends to DynamoDB: the oauth group makes tokens of
// 43 characters, and a client-supplied state of any other shape is simply invalid.
const maxTokenLen = 128

// stateItem is a state as the table holds it.
type stateItem struct {
	Token     string `dynamodbav:"pk"`
	Provider  string `dynamodbav:"provider"`
	Flow      string `dynamodbav:"flow"`
	UserID    string `dynamodbav:"user_id,omitempty"`
	Verifier  string `dynamodbav:"verifier,omitempty"`
	ExpiresAt int64  `dynamodbav:"expires_at"` // unix seconds, the TTL attribute
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
func (s *StateStore) Put(ctx context.Context, st catalog.OAuthState) error {
	if err := validate(st); err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	it, err := attributevalue.MarshalMap(stateItem{
		Token:     st.Token,
		Provider:  st.Provider,
		Flow:      string(st.Flow),
		UserID:    st.UserID,
		Verifier:  st.Verifier,
		ExpiresAt: st.ExpiresAt.Unix(),
	})
	if err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                it,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	return nil
}

func validate(st catalog.OAuthState) error {
	switch {
	case !validToken(st.Token):
		return errors.New("malformed token")
	case st.Provider == "":
		return errors.New("provider missing")
	case st.Flow != catalog.FlowLogin && st.Flow != catalog.FlowLink:
		return fmt.Errorf("unknown flow %q", st.Flow)
	case st.Flow == catalog.FlowLink && st.UserID == "":
		return errors.New("link flow without a user")
	case st.ExpiresAt.IsZero():
		return errors.New("expiry missing")
	}
	return nil
}

// Consume deletes the state and returns it, in one conditional delete, so a token
// works once however many requests race with it. An unknown, consumed, expired or
// malformed token yields catalog.ErrInvalidState.
func (s *StateStore) Consume(ctx context.Context, token string) (catalog.OAuthState, error) {
	if !validToken(token) {
		return catalog.OAuthState{}, catalog.ErrInvalidState
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:           aws.String(s.table),
		Key:                 map[string]types.AttributeValue{KeyAttribute: &types.AttributeValueMemberS{Value: token}},
		ConditionExpression: aws.String("attribute_exists(pk)"),
		ReturnValues:        types.ReturnValueAllOld,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return catalog.OAuthState{}, catalog.ErrInvalidState
	}
	if err != nil {
		return catalog.OAuthState{}, fmt.Errorf("dynamo: consume OAuth state: %w", err)
	}
	var it stateItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return catalog.OAuthState{}, fmt.Errorf("dynamo: consume OAuth state: %w", err)
	}
	if it.ExpiresAt == 0 {
		return catalog.OAuthState{}, errors.New("dynamo: consume OAuth state: the item has no expiry")
	}
	st := catalog.OAuthState{
		Token:     it.Token,
		Provider:  it.Provider,
		Flow:      catalog.OAuthFlow(it.Flow),
		UserID:    it.UserID,
		Verifier:  it.Verifier,
		ExpiresAt: time.Unix(it.ExpiresAt, 0),
	}
	// TTL deletion lags by up to days: an expired item may still be there.
	if !time.Now().Before(st.ExpiresAt) {
		return catalog.OAuthState{}, catalog.ErrInvalidState
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
