package cdn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/s3store"
)

// Response headers of a served image.
const (
	cacheControl = "public, max-age=300, s-maxage=86400"
	msgSuccess   = "Success"
)

// picture is an image ready to serve.
type picture struct {
	data        []byte
	contentType string
	etag        string // strong, quoted
}

func newPicture(data []byte, contentType string) *picture {
	if !strings.HasPrefix(contentType, "image/") {
		// Stored without a usable type: tell it from the bytes.
		if ct, ok := images.Sniff(data); ok {
			contentType = ct
		}
	}
	sum := sha256.Sum256(data)
	return &picture{data: data, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// defaults are the default images, made once: cache entries share them.
type defaults map[string]*picture

func newDefaults() defaults {
	d := defaults{}
	for _, res := range []string{images.ResHigh, images.ResScaled} {
		r := images.DefaultAvatar(res)
		d[res] = newPicture(r.Data, r.ContentType)
	}
	return d
}

// handleAvatar serves GET /user/avatar/{id}/{res} and GET /user/avatar/{id} (res
// scaled): the user's image at that resolution, or the default image when they have
// none. A blank id and a res other than scaled or high are 400; an id that is not a
// positive integer in canonical form cannot name a user and is 404 User not found, as
// is an unknown user.
func handleAvatar(users Users, files Files, c *cache, defs defaults) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.PathValue("id")
		if strings.TrimSpace(raw) == "" {
			httpapi.Error(w, r, apperr.MissingParams())
			return
		}
		res := r.PathValue("res")
		if res == "" {
			res = images.ResScaled
		}
		if res != images.ResScaled && res != images.ResHigh {
			httpapi.Error(w, r, apperr.MissingParams())
			return
		}
		// Only the canonical form names a user ("+3", "03" and " 3" do not), so that
		// each image has one URL for caches and invalidations alike.
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 || strconv.FormatInt(id, 10) != raw {
			httpapi.Error(w, r, apperr.New(apperr.NotFound, apperr.MsgUserNotFound))
			return
		}
		key := cacheKey{id: id, res: res}
		pic, ok := c.get(key)
		if !ok {
			epoch := c.epoch()
			var cacheable bool
			pic, cacheable, err = load(r.Context(), users, files, defs, id, res)
			if err != nil {
				httpapi.Error(w, r, err)
				return
			}
			if cacheable {
				c.add(key, pic, pic == defs[res], epoch)
			}
		}
		serve(w, r, pic)
	})
}

// load finds user id's image at res. An object missing under the reference the
// database gave is most likely a change that committed meanwhile (its replaced objects
// are deleted right after), so the reference is read once more; if the object is still
// missing, the default image is served (uncached) and the inconsistency logged.
func load(ctx context.Context, users Users, files Files, defs defaults, id int64, res string) (*picture, bool, error) {
	var last string
	for range 2 {
		ref, err := users.UserImage(ctx, id)
		if err != nil {
			return nil, false, err
		}
		if ref == "" {
			return defs[res], true, nil
		}
		if ref == last {
			break
		}
		last = ref
		set, err := s3store.ParseRef(ref)
		if err != nil {
			return nil, false, fmt.Errorf("profile image of user %d: %w", id, err)
		}
		obj, err := files.Get(ctx, set.Key(res))
		if errors.Is(err, s3store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("profile image of user %d: %w", id, err)
		}
		return newPicture(obj.Data, obj.ContentType), true, nil
	}
	httpapi.Logger(ctx).Error("profile image objects are missing, serving the default image",
		"user_id", id, "res", res, "ref", last)
	return defs[res], false, nil
}

// serve writes pic through http.ServeContent, whose conditional-request logic
// answers an If-None-Match that names the ETag (weak comparison, "*" included) with
// 304, keeping ETag and Cache-Control. Range requests are not served: the spec answers
// 200 with the whole image, and a small image gains nothing from parts (nor should an
// unsatisfiable range be a plain-text 416 beside the Response Model), so the Range
// header is dropped and the whole image is the answer.
func serve(w http.ResponseWriter, r *http.Request, pic *picture) {
	h := w.Header()
	h.Set("ETag", pic.etag)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Type", pic.contentType)
	if r.Header.Get("Range") != "" {
		whole := *r
		whole.Header = r.Header.Clone()
		whole.Header.Del("Range")
		r = &whole
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(pic.data))
}

// handleChange serves POST /user/avatar/change/{id}, called by the services that
// change a profile image: it drops this container's cached images of the user and,
// with an invalidator, has CloudFront drop /user/avatar/<id> and /user/avatar/<id>/*.
// A blank or non-numeric id is 400; a failed invalidation is 500, so that the caller
// logs it.
func handleChange(c *cache, inv Invalidator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		c.drop(id)
		if inv != nil {
			base := "/user/avatar/" + strconv.FormatInt(id, 10)
			if err := inv.Invalidate(r.Context(), base, base+"/*"); err != nil {
				httpapi.Error(w, r, fmt.Errorf("invalidate the avatar of user %d: %w", id, err))
				return
			}
		}
		httpapi.OK(w, r, msgSuccess)
	})
}
