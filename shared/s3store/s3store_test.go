package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/testenv"
	"github.com/mediacatalog/service/shared/s3store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPutGetListDelete(t *testing.T) {
	ctx := context.Background()
	store := testenv.NewS3Store(t)
	objects := []struct {
		key, contentType string
		data             []byte
	}{
		{"users/1/a/high.jpg", "image/jpeg", []byte("\xff\xd8\xff high")},
		{"users/1/a/scaled.jpg", "image/jpeg", []byte("\xff\xd8\xff scaled")},
		{"contributors/1/b/image.png", "image/png", []byte("\x89PNG\r\n\x1a\n image")},
	}
	for _, o := range objects {
		if err := store.Put(ctx, o.key, o.data, o.contentType); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objects {
		t.Run("get "+o.key, func(t *testing.T) {
			got, err := store.Get(ctx, o.key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, o.data) || got.ContentType != o.contentType || got.ETag == "" {
				t.Errorf("got %q %q etag %q, want %q %q", got.Data, got.ContentType, got.ETag, o.data, o.contentType)
			}
		})
	}
	keys, err := store.List(ctx, "users/1/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"users/1/a/high.jpg", "users/1/a/scaled.jpg"}; !slices.Equal(keys, want) {
		t.Errorf("list users/1/ = %v, want %v", keys, want)
	}

	// Deleting keys without objects is no error.
	if err := store.Delete(ctx, "users/1/a/high.jpg", "users/1/a/scaled.jpg", "users/1/none.jpg"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, "users/1/a/high.jpg"); !errors.Is(err, s3store.ErrNotFound) {
		t.Errorf("get of a deleted key: %v, want ErrNotFound", err)
	}
	keys, err = store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"contributors/1/b/image.png"}; !slices.Equal(keys, want) {
		t.Errorf("left after delete: %v, want %v", keys, want)
	}
}

func TestDeleteManyKeys(t *testing.T) {
	ctx := context.Background()
	store := testenv.NewS3Store(t)
	// More than one DeleteObjects batch holds.
	var keys []string
	for i := range 1003 {
		keys = append(keys, fmt.Sprintf("users/7/k%04d", i))
	}
	for _, k := range keys[:5] {
		if err := store.Put(ctx, k, []byte("x"), "image/jpeg"); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, keys[1002], []byte("x"), "image/jpeg"); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, keys...); err != nil {
		t.Fatal(err)
	}
	left, err := store.List(ctx, "users/7/")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}

func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	store := testenv.UnreachableS3(t)
	if err := store.Put(ctx, "users/1/x", []byte("x"), "image/jpeg"); err == nil {
		t.Error("put succeeded against a closed port")
	}
	if _, err := store.Get(ctx, "users/1/x"); err == nil || errors.Is(err, s3store.ErrNotFound) {
		t.Errorf("get: %v, want a connection error", err)
	}
	if err := store.Delete(ctx, "users/1/x"); err == nil {
		t.Error("delete succeeded against a closed port")
	}
}

func TestImageSetKeys(t *testing.T) {
	tests := []struct {
		owner       s3store.Owner
		contentType string
		high        string // the High key, with NAME for the generated name
		scaled      string
	}{
		{s3store.Users, "image/jpeg", "users/12/NAME/high.jpg", "users/12/NAME/scaled.jpg"},
		{s3store.Users, "image/png", "users/12/NAME/high.png", "users/12/NAME/scaled.png"},
		{s3store.Contributors, "image/jpeg", "contributors/12/NAME/image.jpg", "contributors/12/NAME/scaled.jpg"},
		{s3store.Contributors, "image/png", "contributors/12/NAME/image.png", "contributors/12/NAME/scaled.png"},
	}
	for _, tc := range tests {
		t.Run(string(tc.owner)+" "+tc.contentType, func(t *testing.T) {
			set, err := s3store.NewImageSet(tc.owner, 12, tc.contentType, []byte("high"), []byte("scaled"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := set.Key(s3store.High), strings.Replace(tc.high, "NAME", set.Name, 1); got != want {
				t.Errorf("high key %s, want %s", got, want)
			}
			if got, want := set.Key(s3store.Scaled), strings.Replace(tc.scaled, "NAME", set.Name, 1); got != want {
				t.Errorf("scaled key %s, want %s", got, want)
			}
			if set.ContentType() != tc.contentType {
				t.Errorf("content type %s, want %s", set.ContentType(), tc.contentType)
			}
			back, err := s3store.ParseRef(set.Ref())
			if err != nil {
				t.Fatal(err)
			}
			if back != set {
				t.Errorf("ParseRef(%s) = %+v, want %+v", set.Ref(), back, set)
			}
			// The same picture uploaded again gets keys of its own, with the same
			// content hash.
			again, err := s3store.NewImageSet(tc.owner, 12, tc.contentType, []byte("high"), []byte("scaled"))
			if err != nil {
				t.Fatal(err)
			}
			if again.Ref() == set.Ref() || again.Name[:16] != set.Name[:16] {
				t.Errorf("second upload %s, first %s: want the same hash and another name", again.Ref(), set.Ref())
			}
		})
	}
	if _, err := s3store.NewImageSet(s3store.Users, 1, "image/gif", nil, nil); err == nil {
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
		if set, err := s3store.ParseRef(ref); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", ref, set)
		}
	}
}
