// Package cdn is the cdn route group: users' profile images at two resolutions, and
// the internal route that invalidates them. No authentication.
//
// Images are served from the bucket, or the default image for a user without one,
// with a strong ETag (If-None-Match answers 304) and httpapi.CacheAvatar: avatar URLs
// are not versioned, so browsers keep an image five minutes and CloudFront a day; a
// change invalidates CloudFront's copies. A request uses the user's image reference as read
// by a query (one primary-key lookup) that started at most RefMaxAge ago; each
// container keeps recently served images in memory by that reference (bounded in
// bytes), so a hot avatar costs no S3 round trip. A change writes a new reference, and
// POST /user/avatar/change/{id}, called after the commit, waits RefMaxAge before it
// has CloudFront drop its copies and answers: from then on no container serves the
// replaced or removed picture. When the database cannot confirm a reference, the one
// last read (within StaleFor) is served, with a one-minute Cache-Control.
package cdn

import (
	"context"
	"time"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/httpapi"
)

// DefaultRefMaxAge is how long a container reuses a user's image reference read, and
// so how much longer the change call takes: short enough for an admin's upload not to
// notice, long enough that a hot avatar costs a query a tenth of a second, not one per
// request.
const DefaultRefMaxAge = 100 * time.Millisecond

// DefaultStaleFor is how long a container may serve a user's picture after the
// reference it followed was last read, when the database cannot confirm it (a stall,
// its breaker open): long enough to ride out a failover, short enough that a change
// committed just before a stall is not hidden for long. Such an answer lets caches
// keep it a minute, not a day. The change call drops its container's copy at once.
const DefaultStaleFor = 10 * time.Minute

// DefaultMaxRemembered bounds the users whose last reference read a container keeps
// (for RefMaxAge's reuse and StaleFor's stale answers), whatever the requests ask for:
// a read is a user id, its reference (under 50 bytes) and a time, under 180 bytes with
// the map's share, so at most about 11 MiB. Beyond it an arbitrary user's read goes.
const DefaultMaxRemembered = 1 << 16

// DefaultRetryDelay is the wait before the first retry of a failed invalidation.
const DefaultRetryDelay = 250 * time.Millisecond

// Users finds profile images; *postgres.DB satisfies it.
type Users interface {
	// UserImage returns the user's image reference ("" for none); apperr.NotFound for
	// an unknown user.
	UserImage(ctx context.Context, id int64) (string, error)
}

// Files reads the bucket; *s3store.Store satisfies it.
type Files interface {
	// Get returns the object under key; an error wrapping imageset.ErrNotFound when
	// there is none, imageset.ErrAccessDenied when S3 refuses to say (see load).
	Get(ctx context.Context, key string) (catalog.StoredFile, error)
}

// Invalidator drops paths from the CDN in front of the function; *CloudFront
// satisfies it.
type Invalidator interface {
	Invalidate(ctx context.Context, paths ...string) error
}

// Ledger remembers which picture of each user CloudFront was last told to drop, so
// that a change call for an unchanged user costs no invalidation; *postgres.DB
// satisfies it.
type Ledger interface {
	// ClaimAvatarInvalidation records the user's current picture as invalidated and
	// reports whether it differs from the one recorded before.
	ClaimAvatarInvalidation(ctx context.Context, id int64) (bool, error)
	// RetryAvatarInvalidation makes the next claim for the user succeed (after a
	// failed invalidation).
	RetryAvatarInvalidation(ctx context.Context, id int64) error
}

// Deps are what the group needs.
type Deps struct {
	Users Users
	Files Files
	// CacheBytes bounds the in-container image cache (config.CDNCacheBytes); 0 turns
	// it off.
	CacheBytes int64
	// RefMaxAge is how long a read image reference is reused, and how long the
	// change call waits (DefaultRefMaxAge when 0; negative: every request reads and
	// the change call does not wait).
	RefMaxAge time.Duration
	// StaleFor is how long a read reference may be served when the database cannot
	// confirm it (DefaultStaleFor when 0; negative: never).
	StaleFor time.Duration
	// Invalidator, when set, is told about each change of a user's picture, once
	// (CloudFront when CLOUDFRONT_DISTRIBUTION_ID is set); leave it nil otherwise.
	Invalidator Invalidator
	// Ledger decides which change calls invalidate; required with an Invalidator.
	Ledger Ledger
	// RetryDelay is the wait before the first retry of a failed invalidation,
	// doubled for the next (DefaultRetryDelay when 0).
	RetryDelay time.Duration
}

// Routes is the group's whole API.
func Routes(d Deps) []httpapi.Route {
	maxAge := d.RefMaxAge
	switch {
	case maxAge == 0:
		maxAge = DefaultRefMaxAge
	case maxAge < 0:
		maxAge = 0
	}
	reads := newRefReads(d.Users, maxAge, time.Now)
	reads.staleFor = d.StaleFor
	switch {
	case reads.staleFor == 0:
		reads.staleFor = DefaultStaleFor
	case reads.staleFor < 0:
		reads.staleFor = 0
	}
	avatar := handleAvatar(reads, d.Files, newCache(d.CacheBytes), newDefaults())
	return []httpapi.Route{
		{Pattern: "GET /user/avatar/{id}/{res}", Cache: httpapi.CacheAvatar, Handler: avatar},
		{Pattern: "GET /user/avatar/{id}", Cache: httpapi.CacheAvatar, Handler: avatar},
		{Pattern: "POST /user/avatar/change/{id}", Handler: handleChange(reads, d.Invalidator, d.Ledger, d.RetryDelay, maxAge), Internal: true, Throttle: httpapi.ThrottleWrite},
	}
}
