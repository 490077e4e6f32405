// Package avatars stores and removes the pictures of users (profile images) and
// contributors (avatars): it turns an upload into its two renditions, puts them in the
// bucket, points the database row at them, removes what they replace, and tells the
// cdn function about a user's change (Notifier).
//
// Writes happen in an order that never leaves the database pointing at missing
// objects:
//
//	update: the access rule (users) -> process the image -> put the new objects ->
//	        one statement points the row at them (404 if the row is gone) -> delete
//	        the replaced objects -> notify
//	delete: clear the row's reference -> delete its objects -> notify
//	a user deleted (PurgeUsers, after the deletion committed): every version of every
//	        object under users/<id>/ -> notify (CloudFront's copies go) -> the
//	        purge's record and the ledger row removed
//
// A failure before the row is pointed at the new objects deletes them again, so a
// failed upload leaves nothing behind. Once the database change stands, the request
// succeeds: failing to delete the replaced objects (orphans, logged) or to notify the
// cdn (its containers follow the new reference by themselves; CloudFront keeps the old
// picture up to a day) is logged.
package avatars

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/images"
	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/telemetry"
)

// ErrNoImage is the cause of deleting an image that does not exist (the OpenAPI
// document answers it with a 500).
var ErrNoImage = errors.New("no stored image")

// cleanupTimeout bounds the removal of objects once an outcome is decided outside a
// request (in a request, its grace deadline does); it runs even when the request's
// context is cancelled.
const cleanupTimeout = 30 * time.Second

// Files is the bucket; *s3store.Store satisfies it.
type Files interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
	// Delete removes the current objects (a versioned bucket keeps their versions).
	Delete(ctx context.Context, keys ...string) error
	// DeleteVersions removes every version and delete marker under prefix, for good.
	DeleteVersions(ctx context.Context, prefix string) (int, error)
	// Ready is the bucket's readiness check of owner's pictures (s3store.Store.Ready).
	Ready(owner imageset.Owner) func(ctx context.Context) error
}

// Store holds the image references; *postgres.DB satisfies it. Each method returns the
// reference it replaced ("" for none), and apperr.NotFound for an unknown row.
type Store interface {
	// MayChangeUserImage reports the refusal (apperr.Forbidden, apperr.NotFound) that
	// SetUserImage would answer, so an upload that would be refused never reaches the
	// bucket. SetUserImage checks again, in its transaction.
	MayChangeUserImage(ctx context.Context, id int64) error
	SetUserImage(ctx context.Context, id int64, ref string) (old string, err error)
	ClearUserImage(ctx context.Context, id int64) (old string, err error)
	SetContributorImage(ctx context.Context, id int64, ref string) (old string, err error)
	ClearContributorImage(ctx context.Context, id int64) (old string, err error)
	// PendingUserPurges are the deleted users whose pictures are still to be purged:
	// id's purge first when it has one, then at most others a crash or a failure left.
	PendingUserPurges(ctx context.Context, id int64, others int) ([]int64, error)
	// FinishUserPurge removes the record of user id's purge and what stayed of the user
	// for it (their invalidation ledger row).
	FinishUserPurge(ctx context.Context, id int64) error
}

// Deps are what a Service needs.
type Deps struct {
	Files Files
	Store Store
	// Notifier tells the cdn function about changed profile images; nil tells nobody.
	Notifier Notifier
	// Limits bound the uploads (config.ImageMaxBytes, ImageMaxPixels,
	// ImageMaxDecodedBytes).
	Limits images.Limits
	// FileService is config.FileService: unless set, the upload and delete routes
	// answer 503 (Available). Removing the images of deleted records works regardless.
	FileService bool
}

// Service stores and removes the images of users and contributors.
type Service struct {
	d Deps
}

// New returns a Service.
func New(d Deps) *Service {
	return &Service{d: d}
}

// Ready is the readiness check of the service's bucket for owner's pictures, for the
// function's readiness probe.
func (s *Service) Ready(owner imageset.Owner) func(ctx context.Context) error {
	return s.d.Files.Ready(owner)
}

// Available reports apperr.Unavailable "This service is not handling file uploads."
// unless this instance handles image uploads. The routes check it right after
// authentication, before reading the request.
func (s *Service) Available() error {
	if !s.d.FileService {
		return apperr.New(apperr.Unavailable, apperr.MsgNoFileService)
	}
	return nil
}

// MaxBodyBytes is the largest JSON body an upload route reads: the Base64 text of the
// largest accepted image (4/3 of its size), room for MIME line breaks escaped in JSON,
// and 64 KiB for a data URL prefix and the JSON around it. Larger bodies are 400.
func (s *Service) MaxBodyBytes() int64 {
	n := int64(s.d.Limits.MaxBytes)
	if n <= 0 {
		n = images.DefaultMaxBytes
	}
	return n*4/3 + n/16 + 64<<10
}

// owner is what differs between users and contributors.
type owner struct {
	kind   imageset.Owner
	check  func(ctx context.Context, id int64) error // nil: no rule before the upload
	set    func(ctx context.Context, id int64, ref string) (string, error)
	clear  func(ctx context.Context, id int64) (string, error)
	notify bool // the cdn serves users' images only
}

func (s *Service) users() owner {
	return owner{kind: imageset.Users, check: s.d.Store.MayChangeUserImage, set: s.d.Store.SetUserImage,
		clear: s.d.Store.ClearUserImage, notify: true}
}

func (s *Service) contributors() owner {
	return owner{kind: imageset.Contributors, set: s.d.Store.SetContributorImage, clear: s.d.Store.ClearContributorImage}
}

// UpdateUserImage makes encoded (Base64 or a data URL) user id's profile image. Bad
// image data: apperr.Invalid, nothing stored; unknown user: apperr.NotFound.
func (s *Service) UpdateUserImage(ctx context.Context, id int64, encoded string) error {
	return s.update(ctx, s.users(), id, encoded)
}

// DeleteUserImage removes user id's profile image. Unknown user: apperr.NotFound; a
// user without one: ErrNoImage.
func (s *Service) DeleteUserImage(ctx context.Context, id int64) error {
	return s.delete(ctx, s.users(), id)
}

// sweepBatch is how many purges that a crash or a failure left a deletion finishes
// besides its own: each costs a listing, a deletion and a cdn call in the request's
// cleanup time, and a crash is rare.
const sweepBatch = 2

// PurgeUsers runs after DELETE /admin-users/delete/{id} (its user's deletion
// committed, or a retried deletion found the user gone): it purges user id's pictures
// if their purge is still to do, and up to sweepBatch purges a crash or a failure left.
// A purge deletes every version of every object under users/<id>/ (the versioned
// bucket keeps a replaced or deleted picture for its noncurrent lifetime), tells the
// cdn, whose change call waits out its containers' reference reads and invalidates
// CloudFront's copies of the user's avatar URLs, then removes its record: a step that
// fails leaves the record, so the next deletion (of anyone) purges again, and each
// step is harmless to repeat. It returns the failure of id's own purge; the others'
// are logged.
func (s *Service) PurgeUsers(ctx context.Context, id int64) error {
	ctx, cancel := httpapi.Detached(ctx, cleanupTimeout)
	defer cancel()
	ids, err := s.d.Store.PendingUserPurges(ctx, id, sweepBatch)
	if err != nil {
		return err
	}
	var own error
	for _, u := range ids {
		err := s.purgeUser(ctx, u)
		switch {
		case u == id:
			own = err
		case err != nil:
			httpapi.Logger(ctx).Error("purge the pictures of a deleted user, left by an earlier deletion", "user_id", u, "error", err.Error())
		default:
			httpapi.Logger(ctx).Info("purged the pictures of a deleted user, left by an earlier deletion", "user_id", u)
		}
	}
	return own
}

// purgeUser is one user's purge.
func (s *Service) purgeUser(ctx context.Context, id int64) error {
	prefix := imageset.Prefix(imageset.Users, id)
	if _, err := s.d.Files.DeleteVersions(ctx, prefix); err != nil {
		return fmt.Errorf("purge %s: %w", prefix, err)
	}
	if s.d.Notifier != nil {
		if err := s.d.Notifier.AvatarChanged(ctx, id); err != nil {
			return fmt.Errorf("purge user %d: tell the cdn: %w", id, err)
		}
	}
	return s.d.Store.FinishUserPurge(ctx, id)
}

// UpdateContributorAvatar makes encoded contributor id's avatar. Bad image data:
// apperr.Invalid, nothing stored; unknown contributor: apperr.NotFound.
func (s *Service) UpdateContributorAvatar(ctx context.Context, id int64, encoded string) error {
	return s.update(ctx, s.contributors(), id, encoded)
}

// DeleteContributorAvatar removes contributor id's avatar. Unknown contributor:
// apperr.NotFound; a contributor without one: ErrNoImage.
func (s *Service) DeleteContributorAvatar(ctx context.Context, id int64) error {
	return s.delete(ctx, s.contributors(), id)
}

// RemoveContributorAvatar removes the objects of a deleted contributor's avatar (ref
// as contributors.image held it). Call it after the deletion committed.
func (s *Service) RemoveContributorAvatar(ctx context.Context, ref string) error {
	return s.remove(ctx, s.contributors(), ref)
}

func (s *Service) update(ctx context.Context, o owner, id int64, encoded string) error {
	if o.check != nil {
		if err := o.check(ctx, id); err != nil {
			return err
		}
	}
	res, err := process(ctx, encoded, s.d.Limits)
	if err != nil {
		return err
	}
	set, err := imageset.NewImageSet(o.kind, id, res.High.ContentType, res.High.Data, res.Scaled.Data)
	if err != nil {
		return err
	}
	if err := s.put(ctx, set, res); err != nil {
		return errors.Join(fmt.Errorf("store image of %s %d: %w", o.kind, id, err), s.discard(ctx, o, set))
	}
	old, err := o.set(ctx, id, set.Ref())
	if err != nil {
		// The row is unchanged: the new objects are nobody's.
		if cerr := s.discard(ctx, o, set); cerr != nil {
			httpapi.Logger(ctx).Error("remove the objects of a failed upload", "ref", set.Ref(), "error", cerr.Error())
		}
		return err
	}
	s.afterChange(ctx, o, id, old)
	return nil
}

// put stores both renditions at once.
func (s *Service) put(ctx context.Context, set imageset.ImageSet, res images.Result) error {
	var wg sync.WaitGroup
	var highErr, scaledErr error
	wg.Go(func() {
		highErr = s.d.Files.Put(ctx, set.Key(imageset.High), res.High.Data, res.High.ContentType)
	})
	scaledErr = s.d.Files.Put(ctx, set.Key(imageset.Scaled), res.Scaled.Data, res.Scaled.ContentType)
	wg.Wait()
	return errors.Join(highErr, scaledErr)
}

func (s *Service) delete(ctx context.Context, o owner, id int64) error {
	old, err := o.clear(ctx, id)
	if err != nil {
		return err
	}
	if old == "" {
		return fmt.Errorf("delete image of %s %d: %w", o.kind, id, ErrNoImage)
	}
	s.afterChange(ctx, o, id, old)
	return nil
}

func (s *Service) remove(ctx context.Context, o owner, ref string) error {
	set, err := imageset.ParseRef(ref)
	if err != nil {
		return err
	}
	if set.Owner != o.kind {
		return fmt.Errorf("remove image: %q is not a reference of %s", ref, o.kind)
	}
	if err := s.deleteSet(ctx, set); err != nil {
		return err
	}
	if o.notify {
		s.notify(ctx, set.ID)
	}
	return nil
}

// afterChange runs once the row's new reference stands: it removes the objects of
// old and tells the cdn. Failures are logged, the change stands.
func (s *Service) afterChange(ctx context.Context, o owner, id int64, old string) {
	log := httpapi.Logger(ctx)
	if old != "" {
		if set, err := imageset.ParseRef(old); err != nil {
			log.Warn("replaced image reference is not ours, its objects stay", "owner", string(o.kind), "id", id, "ref", old)
		} else if err := s.deleteSet(ctx, set); err != nil {
			log.Error("remove replaced image objects", "owner", string(o.kind), "id", id, "ref", old, "error", err.Error())
		}
	}
	if o.notify {
		s.notify(ctx, id)
	}
}

// notify tells the cdn about user id, logging a failure.
func (s *Service) notify(ctx context.Context, userID int64) {
	if s.d.Notifier == nil {
		return
	}
	ctx, cancel := httpapi.Detached(ctx, cleanupTimeout)
	defer cancel()
	if err := s.d.Notifier.AvatarChanged(ctx, userID); err != nil {
		httpapi.Logger(ctx).Error("tell the cdn about a changed profile image", "user_id", userID, "error", err.Error())
	}
}

// discard removes the objects of a failed upload's set, which no row ever pointed at.
// A user's then go with every version too (the set's own folder): the upload may have
// stored them after the user's deletion purged every version of their pictures, when
// deleteSet's delete markers alone would keep the deleted user's picture for the
// bucket's noncurrent lifetime. deleteSet goes first all the same: it removes the
// current objects on every S3 the service meets, a bucket without versioning too,
// whose version listing some S3-compatible servers answer in ways of their own. A
// contributor's are deleted as a replaced avatar is.
func (s *Service) discard(ctx context.Context, o owner, set imageset.ImageSet) error {
	if err := s.deleteSet(ctx, set); err != nil || o.kind != imageset.Users {
		return err
	}
	ctx, cancel := httpapi.Detached(ctx, cleanupTimeout)
	defer cancel()
	if _, err := s.d.Files.DeleteVersions(ctx, set.Folder()); err != nil {
		return fmt.Errorf("remove every version of %s: %w", set.Ref(), err)
	}
	return nil
}

// deleteSet removes the objects of set, also when ctx is already cancelled or past its
// deadline: by then the outcome is decided and the objects must go. The request's
// grace (httpapi.Detached) bounds it, so the client is still answered in time.
func (s *Service) deleteSet(ctx context.Context, set imageset.ImageSet) error {
	ctx, cancel := httpapi.Detached(ctx, cleanupTimeout)
	defer cancel()
	if err := s.d.Files.Delete(ctx, set.Keys()...); err != nil {
		return fmt.Errorf("remove %s: %w", set.Ref(), err)
	}
	return nil
}

// process is images.Process in a span of its own, its time in the request's metrics.
func process(ctx context.Context, encoded string, lim images.Limits) (images.Result, error) {
	start := time.Now()
	_, span := telemetry.Span(ctx, "images.Process")
	res, err := images.Process(encoded, lim)
	telemetry.End(span, err)
	telemetry.Time(ctx, telemetry.MetricImageTime, time.Since(start))
	return res, err
}
