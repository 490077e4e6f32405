package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mediacatalog/service/shared/catalog"
)

// maxTokenLen bounds what Consume sends to DynamoDB: the oauth group makes tokens of
// 43 characters, and a client-supplied state of any other shape is simply invalid.
const maxTokenLen = 128

// A state as the table holds it: pk (the token), provider, flow, user_id and verifier
// (absent when empty), expires_at (unix seconds, the TTL attribute).

// stateItem is the item of st.
func stateItem(st catalog.OAuthState) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		KeyAttribute: attrS(st.Token),
		"provider":   attrS(st.Provider),
		"flow":       attrS(string(st.Flow)),
		"expires_at": attrN(st.ExpiresAt.Unix()),
	}
	if st.UserID != "" {
		it["user_id"] = attrS(st.UserID)
	}
	if st.Verifier != "" {
		it["verifier"] = attrS(st.Verifier)
	}
	return it
}

// stateOf reads a state item.
func stateOf(it map[string]types.AttributeValue) (catalog.OAuthState, error) {
	var st catalog.OAuthState
	var flow string
	var expires int64
	var err error
	for name, dst := range map[string]*string{KeyAttribute: &st.Token, "provider": &st.Provider, "flow": &flow,
		"user_id": &st.UserID, "verifier": &st.Verifier} {
		if *dst, err = itemS(it, name); err != nil {
			return catalog.OAuthState{}, err
		}
	}
	if expires, err = itemN(it, "expires_at"); err != nil {
		return catalog.OAuthState{}, err
	}
	if expires == 0 {
		return catalog.OAuthState{}, errors.New("the item has no expiry")
	}
	st.Flow = catalog.OAuthFlow(flow)
	st.ExpiresAt = time.Unix(expires, 0)
	return st, nil
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
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                stateItem(st),
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
	st, err := stateOf(out.Attributes)
	if err != nil {
		return catalog.OAuthState{}, fmt.Errorf("dynamo: consume OAuth state: %w", err)
	}
	// TTL deletion lags by up to days: an expired item may still be there.
	if !time.Now().Before(st.ExpiresAt) {
		return catalog.OAuthState{}, catalog.ErrInvalidState
	}
	return st, nil
}

// readinessToken is a state token never issued (issued ones are random).
const readinessToken = "readiness-probe-never-issued"

// Ready consumes a state never issued, for the function's readiness probe: the table
// answers the conditional delete's ConditionalCheckFailed only when it exists and the
// function may delete from it.
func (s *StateStore) Ready(ctx context.Context) error {
	_, err := s.Consume(ctx, readinessToken)
	if errors.Is(err, catalog.ErrInvalidState) {
		return nil
	}
	if err == nil {
		return errors.New("dynamo: the readiness probe's state token was stored")
	}
	return err
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
