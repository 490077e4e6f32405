package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/imageset"
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
	if _, err := store.Get(ctx, "users/1/a/high.jpg"); !errors.Is(err, imageset.ErrNotFound) {
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
	if _, err := store.Get(ctx, "users/1/x"); err == nil || errors.Is(err, imageset.ErrNotFound) {
		t.Errorf("get: %v, want a connection error", err)
	}
	if err := store.Delete(ctx, "users/1/x"); err == nil {
		t.Error("delete succeeded against a closed port")
	}
}
