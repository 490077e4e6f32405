package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mediacatalog/service/shared/catalog"
)

func TestStateItemRoundTrip(t *testing.T) {
	exp := time.Unix(1_900_000_000, 0)
	tests := []catalog.OAuthState{
		{Token: "tok", Provider: "github", Flow: catalog.FlowLogin, Verifier: "v", ExpiresAt: exp},
		{Token: "tok", Provider: "google", Flow: catalog.FlowLink, UserID: "42", ExpiresAt: exp},
	}
	for _, st := range tests {
		it := stateItem(st)
		if _, ok := it["user_id"]; ok != (st.UserID != "") {
			t.Errorf("%+v: user_id present = %v", st, ok)
		}
		got, err := stateOf(it)
		if err != nil {
			t.Fatal(err)
		}
		if got != st {
			t.Errorf("round trip: %+v, want %+v", got, st)
		}
	}
}

func TestStateOfRefusesMalformedItems(t *testing.T) {
	good := func() map[string]types.AttributeValue {
		return stateItem(catalog.OAuthState{Token: "t", Provider: "github", Flow: catalog.FlowLogin, ExpiresAt: time.Unix(1e9, 0)})
	}
	tests := []struct {
		name   string
		change func(map[string]types.AttributeValue)
	}{
		{"no expiry", func(it map[string]types.AttributeValue) { delete(it, "expires_at") }},
		{"expiry as a string", func(it map[string]types.AttributeValue) { it["expires_at"] = attrS("1000") }},
		{"expiry not an integer", func(it map[string]types.AttributeValue) {
			it["expires_at"] = &types.AttributeValueMemberN{Value: "1.5"}
		}},
		{"provider as a number", func(it map[string]types.AttributeValue) { it["provider"] = attrN(1) }},
		{"token as a boolean", func(it map[string]types.AttributeValue) {
			it[KeyAttribute] = &types.AttributeValueMemberBOOL{Value: true}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := good()
			tc.change(it)
			if st, err := stateOf(it); err == nil {
				t.Errorf("accepted as %+v", st)
			}
		})
	}
}
