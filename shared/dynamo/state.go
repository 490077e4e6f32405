package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/mediacatalog/service/shared/awsapi"
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

// The attributes of a state item besides the key (the token) and expires_at.
const (
	attrProvider = "provider"
	attrFlow     = "flow"
	attrUserID   = "user_id"
	attrVerifier = "verifier"
)

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
	client *Client
	table  string
}

// NewStateStore returns a store over the given table.
func NewStateStore(client *Client, table string) *StateStore {
	return &StateStore{client: client, table: table}
}

// Put stores a state. ExpiresAt is kept to the second. A token already stored is an
// error, never an overwrite.
func (s *StateStore) Put(ctx context.Context, st State) error {
	if err := st.validate(); err != nil {
		return fmt.Errorf("dynamo: put OAuth state: %w", err)
	}
	it := item{
		KeyAttribute:     str(st.Token),
		attrProvider:     str(st.Provider),
		attrFlow:         str(string(st.Flow)),
		ExpiresAttribute: num(st.ExpiresAt.Unix()),
	}
	if st.UserID != "" {
		it[attrUserID] = str(st.UserID)
	}
	if st.Verifier != "" {
		it[attrVerifier] = str(st.Verifier)
	}
	err := s.client.call(ctx, "PutItem", putItemInput{
		TableName:           s.table,
		Item:                it,
		ConditionExpression: "attribute_not_exists(pk)",
	}, &struct{}{})
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
	var out itemOutput
	err := s.client.call(ctx, "DeleteItem", deleteItemInput{
		TableName:           s.table,
		Key:                 item{KeyAttribute: str(token)},
		ConditionExpression: "attribute_exists(pk)",
		ReturnValues:        "ALL_OLD",
	}, &out)
	if awsapi.IsCode(err, "ConditionalCheckFailedException") {
		return State{}, ErrInvalidState
	}
	if err != nil {
		return State{}, fmt.Errorf("dynamo: consume OAuth state: %w", err)
	}
	expires, err := out.Attributes.num(ExpiresAttribute)
	if err != nil {
		return State{}, fmt.Errorf("dynamo: consume OAuth state: %w", err)
	}
	st := State{
		Token:     out.Attributes.str(KeyAttribute),
		Provider:  out.Attributes.str(attrProvider),
		Flow:      Flow(out.Attributes.str(attrFlow)),
		UserID:    out.Attributes.str(attrUserID),
		Verifier:  out.Attributes.str(attrVerifier),
		ExpiresAt: time.Unix(expires, 0),
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
