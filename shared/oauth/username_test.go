package oauth

import "testing"

func TestUsernameBase(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Jane Doe", "jane-doe"},
		{"jane.doe", "jane-doe"},
		{"  Zoë Åberg  ", "zoe-aberg"},
		{"a_b", "a_b"},
		{"Tom & Jerry", "tom-and-jerry"},
		{"尾田栄一郎", "wei-tian-rong-lang"},
		{"🙂", ""},
		{"", ""},
		{"Maximilian Alexander Montgomery Worthington", "maximilian-alexander-montgomery"},
		{"abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz012345"},
	} {
		if got := usernameBase(tt.in); got != tt.want {
			t.Errorf("usernameBase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
