package oauth

import "testing"

func TestLimitKey(t *testing.T) {
	for _, tt := range []struct{ ip, want string }{
		{"198.51.100.7", "oauth:198.51.100.7"},
		{"::ffff:198.51.100.7", "oauth:198.51.100.7"},
		{"2001:db8::7", "oauth:2001:db8::/64"},
		{"2001:db8::ffff:1:2:3", "oauth:2001:db8::/64"},
		{"2001:db8:0:0:ffff:ffff:ffff:ffff", "oauth:2001:db8::/64"},
		{"2001:db8:0:1::7", "oauth:2001:db8:0:1::/64"},
		{"2001:DB8:aa:bb:cc::1", "oauth:2001:db8:aa:bb::/64"},
		{"fe80::1%eth0", "oauth:fe80::/64"},
		{"::1", "oauth:::/64"},
		{"not an address", "oauth:not an address"},
	} {
		if got := limitKey(tt.ip); got != tt.want {
			t.Errorf("limitKey(%q) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}
