package cdn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/telemetry"
)

const msgSuccess = "Success"

// picture is an image ready to serve, with its header values made once: every
// response shares them (Header.Set and Add replace or copy a value, never write into
// it, and net/http copies the header before it is sent).
type picture struct {
	data        []byte
	contentType []string
	etag        []string // strong, quoted
}

// cacheControlValue is the Cache-Control value every image response shares;
// staleCacheControlValue that of a picture served stale (serve).
var (
	cacheControlValue      = []string{httpapi.CacheAvatar}
	staleCacheControlValue = []string{httpapi.CacheAvatarUnconfirmed}
)

func newPicture(data []byte, contentType string) *picture {
	if !strings.HasPrefix(contentType, "image/") {
		// Stored without a usable type: tell it from the bytes.
		if ct, ok := images.Sniff(data); ok {
			contentType = ct
		}
	}
	sum := sha256.Sum256(data)
	return &picture{data: data, contentType: []string{contentType}, etag: []string{`"` + hex.EncodeToString(sum[:16]) + `"`}}
}

// defaults are the default images, made once: cache entries share them.
type defaults map[string]*picture

func newDefaults() defaults {
	d := defaults{}
	for _, res := range []string{imageset.High, imageset.Scaled} {
		r := images.DefaultAvatar(res)
		d[res] = newPicture(r.Data, r.ContentType)
	}
	return d
}

// handleAvatar serves GET /user/avatar/{id}/{res} and GET /user/avatar/{id} (res
// scaled): the user's image at that resolution, or the default image when they have
// none. A blank id and a res other than scaled or high are 400; an id that is not a
// positive integer cannot name a user and is 404 User not found, as is an unknown user.
//
// Each picture has one URL, so that caches and invalidations name the same thing: a
// request whose path as sent (percent-encoding included: r.URL.EscapedPath) is not the
// canonical spelling of what it names ("%33", "03", "+3", "hig%68", "HIGH") is 404
// User not found too. CloudFront keys its cache on the path as sent, and an
// invalidation names only the canonical paths.
//
// The in-memory cache is keyed by the user's image reference, read by a query that
// started at most Deps.RefMaxAge ago (refReads): a change writes a new reference before
// the change call is made, and that call waits as long (handleChange), so once the change
// is announced no container, warm or not, serves the replaced or removed picture, and
// a CloudFront miss after the invalidation can only be filled with the new one.
func handleAvatar(reads *refReads, files Files, c *cache, defs defaults) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.PathValue("id")
		if strings.TrimSpace(raw) == "" {
			httpapi.Error(w, r, apperr.MissingParams())
			return
		}
		res := r.PathValue("res")
		suffix := "" // of the canonical path, after the id
		switch {
		case res == "":
			res = imageset.Scaled
		case res == imageset.Scaled || res == imageset.High:
			suffix = res
		case strings.EqualFold(res, imageset.Scaled) || strings.EqualFold(res, imageset.High):
			httpapi.Error(w, r, userNotFound())
			return
		default:
			httpapi.Error(w, r, apperr.MissingParams())
			return
		}
		// Base 10 takes digits after an optional sign: with no sign and no leading zero,
		// raw is the id's one spelling.
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 || raw[0] == '+' || raw[0] == '0' || !canonicalPath(r.URL.EscapedPath(), raw, suffix) {
			httpapi.Error(w, r, userNotFound())
			return
		}
		pic, stale, err := load(r.Context(), reads, files, c, defs, id, res)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		// An image answered (200 or 304) writes no request line: API Gateway's access
		// log has every request, the line is a large part of this route's cost, and
		// CloudWatch would bill it on the service's most frequent request. Errors keep it.
		httpapi.LogErrorsOnly(r)
		serve(w, r, pic, stale)
	})
}

// avatarBase is the path of the avatars, before the user id.
const avatarBase = "/user/avatar/"

// canonicalPath reports whether path is avatarBase + id, followed by "/" + res when
// res is not empty: the comparison without building that string on every request.
func canonicalPath(path, id, res string) bool {
	rest, ok := strings.CutPrefix(path, avatarBase)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, id)
	if !ok {
		return false
	}
	if res == "" {
		return rest == ""
	}
	return len(rest) == 1+len(res) && rest[0] == '/' && rest[1:] == res
}

func userNotFound() error { return apperr.New(apperr.NotFound, apperr.MsgUserNotFound) }

// loadAttempts bounds how often load reads the reference: a change may commit between
// the reference read and the object read (the replaced objects are deleted right
// after), and each reading of the reference follows one such change.
const loadAttempts = 3

// load finds user id's image at res: the reference (refReads), then its image from the
// cache or the bucket. An object missing under the reference is most likely a change
// that committed meanwhile, so the reference is read again, by a query of its own, and
// followed. The cdn's own AccessDenied counts as missing: S3 answers it instead of
// NoSuchKey to a reader that may not list the bucket. If the objects of a reference
// that still stands are missing, the default image is served and the inconsistency
// logged.
//
// When the database cannot confirm the reference (a stall, an open breaker), the
// reference last read, within StaleFor, is followed instead, and the picture is
// reported stale.
func load(ctx context.Context, reads *refReads, files Files, c *cache, defs defaults, id int64, res string) (*picture, bool, error) {
	var last string
	stale := false
	for attempt := range loadAttempts {
		ref, err := reads.userImage(ctx, id, attempt == 0)
		if err != nil {
			kept, ok := reads.stale(id, err)
			if !ok {
				return nil, false, err
			}
			httpapi.Logger(ctx).Warn("the database does not confirm the profile image, serving the one last read",
				"user_id", id, "res", res, "ref", kept, "error", err.Error())
			ref, stale = kept, true
		}
		if ref == "" {
			return defs[res], stale, nil
		}
		if ref == last {
			break
		}
		last = ref
		key := cacheKey{ref: ref, res: res}
		if pic, ok := c.get(key); ok {
			telemetry.Add(ctx, telemetry.MetricCacheHit, 1)
			return pic, stale, nil
		}
		telemetry.Add(ctx, telemetry.MetricCacheMiss, 1)
		set, err := imageset.ParseRef(ref)
		if err != nil {
			return nil, false, fmt.Errorf("profile image of user %d: %w", id, err)
		}
		obj, err := files.Get(ctx, set.Key(res))
		if errors.Is(err, imageset.ErrNotFound) || errors.Is(err, imageset.ErrAccessDenied) {
			level := slog.LevelInfo
			if errors.Is(err, imageset.ErrAccessDenied) {
				level = slog.LevelWarn // also what a wrong grant looks like
			}
			httpapi.Logger(ctx).Log(ctx, level, "profile image object missing, reading the reference again",
				"user_id", id, "res", res, "ref", ref, "error", err.Error())
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("profile image of user %d: %w", id, err)
		}
		pic := newPicture(obj.Data, obj.ContentType)
		c.add(key, pic)
		return pic, stale, nil
	}
	httpapi.Logger(ctx).Error("profile image objects are missing, serving the default image",
		"user_id", id, "res", res, "ref", last)
	return defs[res], stale, nil
}

// serve writes pic through httpapi.ServeWhole (http.ServeContent), whose
// conditional-request logic answers an If-None-Match that names the ETag (weak
// comparison, "*" included) with 304, keeping ETag and Cache-Control. Range requests
// are not served and no Accept-Ranges is sent: the OpenAPI document answers 200 with the whole
// image, and a picture of at most 512 pixels a side gains nothing from parts (nor
// should an unsatisfiable range be a plain-text 416 beside the Response Model).
//
// A stale picture (load) lets caches keep it only a minute: it may have
// been replaced while the database could not say so.
func serve(w http.ResponseWriter, r *http.Request, pic *picture, stale bool) {
	h := w.Header()
	h["Etag"] = pic.etag
	h["Cache-Control"] = cacheControlValue
	if stale {
		h["Cache-Control"] = staleCacheControlValue
	}
	h["Content-Type"] = pic.contentType
	httpapi.ServeWhole(w, r, pic.data)
}

// handleChange serves POST /user/avatar/change/{id}, called by the services that
// change a profile image once the change is committed. The containers need no word of
// it, but they reuse a reference read for up to settle (refReads): the call first
// waits that long, after which every container's reads started after the commit, so
// that neither they nor a CloudFront miss after the invalidation can see the replaced
// picture once the call returns. With an invalidator, it has CloudFront drop the user's three avatar URLs, exact paths, but
// only when the user's picture differs from the one last invalidated (the ledger): the
// route is public, and calls for unchanged users must cost nothing. A failed
// invalidation is tried invalidateAttempts times in all (on top of the client's own
// retries), then counted (the InvalidationFailures metric), left for the next call to
// retry, and answered 500 so that the caller logs it. A blank or non-numeric id is 400.
func handleChange(reads *refReads, inv Invalidator, ledger Ledger, delay, settle time.Duration) http.Handler {
	if delay <= 0 {
		delay = DefaultRetryDelay
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		reads.forget(id)
		if err := wait(r.Context(), settle); err != nil {
			httpapi.Error(w, r, fmt.Errorf("change of user %d: %w", id, err))
			return
		}
		if inv == nil {
			httpapi.OK(w, r, msgSuccess)
			return
		}
		ctx := r.Context()
		changed, err := ledger.ClaimAvatarInvalidation(ctx, id)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if !changed {
			httpapi.OK(w, r, msgSuccess)
			return
		}
		base := avatarBase + strconv.FormatInt(id, 10)
		paths := []string{base, base + "/" + imageset.High, base + "/" + imageset.Scaled}
		if err := invalidate(ctx, inv, paths, delay); err != nil {
			recordFailure(httpapi.Logger(ctx), "InvalidationFailures")
			if rerr := ledger.RetryAvatarInvalidation(context.WithoutCancel(ctx), id); rerr != nil {
				err = errors.Join(err, rerr)
			}
			httpapi.Error(w, r, fmt.Errorf("invalidate the avatar of user %d: %w", id, err))
			return
		}
		httpapi.OK(w, r, msgSuccess)
	})
}

// wait sleeps for d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// invalidateAttempts is how often handleChange tries an invalidation.
const invalidateAttempts = 3

// invalidate creates one invalidation of paths, retrying with a doubling delay while
// the request's deadline allows.
func invalidate(ctx context.Context, inv Invalidator, paths []string, delay time.Duration) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = inv.Invalidate(ctx, paths...); err == nil || attempt == invalidateAttempts {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		delay *= 2
	}
}
