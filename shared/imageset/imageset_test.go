package imageset_test

import (
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/imageset"
)

func TestImageSetKeys(t *testing.T) {
	tests := []struct {
		owner       imageset.Owner
		contentType string
		high        string // the High key, with NAME for the generated name
		scaled      string
	}{
		{imageset.Users, "image/jpeg", "users/12/NAME/high.jpg", "users/12/NAME/scaled.jpg"},
		{imageset.Users, "image/png", "users/12/NAME/high.png", "users/12/NAME/scaled.png"},
		{imageset.Contributors, "image/jpeg", "contributors/12/NAME/image.jpg", "contributors/12/NAME/scaled.jpg"},
		{imageset.Contributors, "image/png", "contributors/12/NAME/image.png", "contributors/12/NAME/scaled.png"},
	}
	for _, tc := range tests {
		t.Run(string(tc.owner)+" "+tc.contentType, func(t *testing.T) {
			set, err := imageset.NewImageSet(tc.owner, 12, tc.contentType, []byte("high"), []byte("scaled"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := set.Key(imageset.High), strings.Replace(tc.high, "NAME", set.Name, 1); got != want {
				t.Errorf("high key %s, want %s", got, want)
			}
			if got, want := set.Key(imageset.Scaled), strings.Replace(tc.scaled, "NAME", set.Name, 1); got != want {
				t.Errorf("scaled key %s, want %s", got, want)
			}
			for _, k := range set.Keys() {
				if !strings.HasPrefix(k, set.Folder()) || strings.Count(set.Folder(), "/") != 3 {
					t.Errorf("key %s is not under the set's folder %s", k, set.Folder())
				}
			}
			if set.ContentType() != tc.contentType {
				t.Errorf("content type %s, want %s", set.ContentType(), tc.contentType)
			}
			back, err := imageset.ParseRef(set.Ref())
			if err != nil {
				t.Fatal(err)
			}
			if back != set {
				t.Errorf("ParseRef(%s) = %+v, want %+v", set.Ref(), back, set)
			}
			// The same picture uploaded again gets keys of its own, with the same
			// content hash.
			again, err := imageset.NewImageSet(tc.owner, 12, tc.contentType, []byte("high"), []byte("scaled"))
			if err != nil {
				t.Fatal(err)
			}
			if again.Ref() == set.Ref() || again.Name[:16] != set.Name[:16] || strings.HasPrefix(again.Folder(), set.Folder()) {
				t.Errorf("second upload %s, first %s: want the same hash and another name", again.Ref(), set.Ref())
			}
		})
	}
	if _, err := imageset.NewImageSet(imageset.Users, 1, "image/gif", nil, nil); err == nil {
		t.Error("a GIF set was named; renditions are JPEG or PNG")
	}
}

func TestParseRefRejects(t *testing.T) {
	for _, ref := range []string{
		"",
		"users/12/0123456789abcdef-01234567",        // no extension
		"users/12/0123456789abcdef-01234567.gif",    // not a rendition format
		"users/0/0123456789abcdef-01234567.jpg",     // not an id
		"users/-1/0123456789abcdef-01234567.jpg",    // not an id
		"series/12/0123456789abcdef-01234567.jpg",   // not an owner
		"users/12/../0123456789abcdef-01234567.jpg", // path tricks
		"users/12/0123456789ABCDEF-01234567.jpg",    // upper case
		"users/99999999999999999999/0123456789abcdef-01234567.jpg",
		"publishers/kodansha.png",
		"users/12/0123456789abcdef-01234567.jpg.png",              // two extensions
		"users/12/0123456789abcdef-0123456.jpg",                   // short nonce
		"users/12/0123456789abcdef_01234567.jpg",                  // no dash
		"users/012/0123456789abcdef-01234567.jpg",                 // leading zero
		"users/12/0123456789abcdeg-01234567.jpg",                  // not hex
		"users/12/0123456789abcdef-01234567.jpg/x",                // extra segment
		"users/9223372036854775808/0123456789abcdef-01234567.jpg", // over int64
	} {
		if set, err := imageset.ParseRef(ref); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", ref, set)
		}
	}
}
