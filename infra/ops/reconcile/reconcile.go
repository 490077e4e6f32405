// Package reconcile brings the images bucket back in line with the database after a
// point-in-time restore of the database (make reconcile-images; docs/operations.md).
// The bucket is versioned: a picture removed after the restore point is a delete
// marker over its last version, and a picture uploaded after it is an object that no
// restored row names. A row that names a picture is the truth:
//
//   - every key of a picture a row names whose current version is a delete marker is
//     made current again by removing its delete markers (S3's way to undelete: the
//     newest version beneath becomes current, with its own version id and headers);
//   - every current object that no row names is listed, and with Delete removed (a
//     plain delete: a delete marker, so it stays recoverable for NoncurrentImageDays);
//   - every picture a row names that has no version left is reported missing (its
//     versions expired, or were deleted with their user).
//
// The walk lists the bucket's versions in pages (ListObjectVersions, key order), looks
// the owners of a page's keys up by primary key (one query per owner kind and page),
// and sends its removals per page (DeleteObjects, up to 1,000 keys), so it holds one
// page and the keys of the named pictures in memory, and an interrupted run loses at
// most its page: a rerun finds what is left to do and does only that (idempotent).
// Then it walks the rows with a picture in id order (the partial indexes, batches of a
// thousand) for the missing ones.
//
// Objects and delete markers younger than Settle are left alone: the service may be
// serving while the walk runs, and an upload stores its objects before its row names
// them (a function call lasts at most 25 s), and a delete makes its marker after the
// row stopped naming the picture.
//
// The version operations are here, not in shared/s3store: no function may list
// versions or remove them, only the operator.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mediacatalog/service/shared/imageset"
	"github.com/mediacatalog/service/shared/postgres"
)

// Options tune a run.
type Options struct {
	Bucket string
	// Delete removes the current objects no row names (otherwise they are listed).
	Delete bool
	// Page is the versions per listing page and the most keys a removal sends (S3's
	// limit, and the default, is 1,000).
	Page int
	// Settle: objects and markers modified less than this before the run started are
	// left alone (default a minute).
	Settle time.Duration
	// Out receives a line per page (progress), per unnamed object and per missing
	// picture.
	Out io.Writer
	// CallTimeout bounds each S3 request and database query (default 30 s).
	CallTimeout time.Duration
}

// Report is what a run found and did.
type Report struct {
	Keys      int // keys listed
	Named     int // keys of pictures a row names
	Restored  int // of those, made current again
	Unnamed   int // current objects no row names
	Removed   int // of those, removed (Delete)
	Recent    int // keys left alone: changed less than Settle before the run
	Foreign   int // keys outside the pictures' layout, left alone
	Missing   int // keys of pictures a row names that the bucket has no version of
	Pages     int
	Elapsed   time.Duration
	MissingOf []string // the references of the missing pictures (the first 100)
}

// Clean reports whether the bucket and the database agree: nothing restored, unnamed
// (still current), or missing.
func (r Report) Clean() bool {
	return r.Restored == 0 && r.Unnamed == r.Removed && r.Missing == 0
}

// S3 is the part of the SDK's S3 client a run uses.
type S3 interface {
	ListObjectVersions(ctx context.Context, in *s3.ListObjectVersionsInput, opts ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error)
	DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput, opts ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error)
}

// entry is one version or delete marker of a key.
type entry struct {
	versionID string
	marker    bool
	latest    bool
	modified  time.Time
}

// key is a key with all its versions and markers.
type key struct {
	name    string
	entries []entry
}

// latest is the key's current entry (S3 flags exactly one).
func (k key) latest() (entry, bool) {
	for _, e := range k.entries {
		if e.latest {
			return e, true
		}
	}
	return entry{}, false
}

func (k key) hasVersion() bool {
	return slices.ContainsFunc(k.entries, func(e entry) bool { return !e.marker })
}

// Run reconciles the bucket with db.
func Run(ctx context.Context, db *postgres.DB, client S3, o Options) (Report, error) {
	if o.Bucket == "" {
		return Report{}, errors.New("reconcile: no bucket")
	}
	if o.Page <= 0 || o.Page > 1000 {
		o.Page = 1000
	}
	if o.Settle <= 0 {
		o.Settle = time.Minute
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	r := &run{db: db, s3: client, o: o, started: time.Now(), current: map[string]bool{}}
	err := r.walkBucket(ctx)
	if err == nil {
		err = r.walkRows(ctx)
	}
	r.rep.Elapsed = time.Since(r.started)
	return r.rep, err
}

type run struct {
	db      *postgres.DB
	s3      S3
	o       Options
	started time.Time
	rep     Report
	// current holds the keys of named pictures that are current after the walk.
	current map[string]bool
}

// settled reports whether t is old enough to act on.
func (r *run) settled(t time.Time) bool { return t.Before(r.started.Add(-r.o.Settle)) }

func (r *run) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.o.CallTimeout)
}

// walkBucket lists every version, a page at a time; the last key of a page waits for
// the next page, which may hold more of its versions.
func (r *run) walkBucket(ctx context.Context) error {
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(r.o.Bucket), MaxKeys: aws.Int32(int32(r.o.Page))}
	var pending []key
	for {
		cctx, cancel := r.call(ctx)
		page, err := r.s3.ListObjectVersions(cctx, in)
		cancel()
		if err != nil {
			return fmt.Errorf("reconcile: list the versions of %s: %w", r.o.Bucket, err)
		}
		r.rep.Pages++
		pending = merge(pending, page)
		done := !aws.ToBool(page.IsTruncated)
		ready := pending
		if !done && len(pending) > 0 {
			ready, pending = pending[:len(pending)-1], pending[len(pending)-1:]
		}
		if err := r.settle(ctx, ready); err != nil {
			return err
		}
		fmt.Fprintf(r.o.Out, "reconcile: page %d, %d keys: %d named, %d restored, %d unnamed (%d removed), %d recent left alone\n",
			r.rep.Pages, r.rep.Keys, r.rep.Named, r.rep.Restored, r.rep.Unnamed, r.rep.Removed, r.rep.Recent)
		if done {
			return nil
		}
		in.KeyMarker, in.VersionIdMarker = page.NextKeyMarker, page.NextVersionIdMarker
	}
}

// listed is one version or marker of a listing page, with its key.
type listed struct {
	name string
	e    entry
}

// merge adds a page's versions and markers to keys (in key order, S3's), extending
// the last key when the page continues it.
func merge(keys []key, page *s3.ListObjectVersionsOutput) []key {
	// A page lists its versions and its markers apart; both are in key order.
	var all []listed
	for _, v := range page.Versions {
		all = append(all, listed{aws.ToString(v.Key), entry{versionID: aws.ToString(v.VersionId),
			latest: aws.ToBool(v.IsLatest), modified: aws.ToTime(v.LastModified)}})
	}
	for _, m := range page.DeleteMarkers {
		all = append(all, listed{aws.ToString(m.Key), entry{versionID: aws.ToString(m.VersionId), marker: true,
			latest: aws.ToBool(m.IsLatest), modified: aws.ToTime(m.LastModified)}})
	}
	slices.SortStableFunc(all, func(a, b listed) int { return strings.Compare(a.name, b.name) })
	for _, x := range all {
		if n := len(keys); n > 0 && keys[n-1].name == x.name {
			keys[n-1].entries = append(keys[n-1].entries, x.e)
			continue
		}
		keys = append(keys, key{name: x.name, entries: []entry{x.e}})
	}
	return keys
}

// picture is a key read as a stored picture's: its set and its reference.
type picture struct {
	set imageset.ImageSet
	ref string
}

// parseKey reads "<owner>/<id>/<name>/<file>.<ext>" as one of an image set's keys.
func parseKey(k string) (picture, bool) {
	parts := strings.Split(k, "/")
	if len(parts) != 4 {
		return picture{}, false
	}
	_, ext, ok := strings.Cut(parts[3], ".")
	if !ok {
		return picture{}, false
	}
	set, err := imageset.ParseRef(parts[0] + "/" + parts[1] + "/" + parts[2] + "." + ext)
	if err != nil || !slices.Contains(set.Keys(), k) {
		return picture{}, false
	}
	return picture{set: set, ref: set.Ref()}, true
}

// settle decides each complete key of a page and sends the page's removals.
func (r *run) settle(ctx context.Context, keys []key) error {
	if len(keys) == 0 {
		return nil
	}
	ids := map[imageset.Owner][]int64{}
	pics := make([]picture, len(keys))
	ok := make([]bool, len(keys))
	for i, k := range keys {
		pics[i], ok[i] = parseKey(k.name)
		if ok[i] {
			ids[pics[i].set.Owner] = append(ids[pics[i].set.Owner], pics[i].set.ID)
		}
	}
	named := map[imageset.Owner]map[int64]string{}
	for owner, list := range ids {
		slices.Sort(list)
		cctx, cancel := r.call(ctx)
		refs, err := r.db.NamedImages(cctx, owner, slices.Compact(list))
		cancel()
		if err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		named[owner] = refs
	}
	var restore, remove []types.ObjectIdentifier
	for i, k := range keys {
		r.rep.Keys++
		if !ok[i] {
			r.rep.Foreign++
			continue
		}
		latest, _ := k.latest()
		if named[pics[i].set.Owner][pics[i].set.ID] == pics[i].ref {
			r.rep.Named++
			switch {
			case !latest.marker:
				r.current[k.name] = true
			case !k.hasVersion():
				// Reported by walkRows.
			case !r.settled(latest.modified):
				// Deleted while the walk runs: the live service's, not missing.
				r.rep.Recent++
				r.current[k.name] = true
			default:
				for _, e := range k.entries {
					if e.marker {
						restore = append(restore, types.ObjectIdentifier{Key: aws.String(k.name), VersionId: aws.String(e.versionID)})
					}
				}
				r.rep.Restored++
				r.current[k.name] = true
			}
			continue
		}
		if latest.marker {
			continue // removed already
		}
		if !r.settled(latest.modified) {
			r.rep.Recent++
			continue
		}
		r.rep.Unnamed++
		fmt.Fprintf(r.o.Out, "unnamed %s (modified %s)\n", k.name, latest.modified.UTC().Format(time.RFC3339))
		if r.o.Delete {
			remove = append(remove, types.ObjectIdentifier{Key: aws.String(k.name)})
		}
	}
	if err := r.delete(ctx, restore); err != nil {
		return err
	}
	if err := r.delete(ctx, remove); err != nil {
		return err
	}
	r.rep.Removed += len(remove)
	return nil
}

// delete sends ids in DeleteObjects requests of at most Page keys each.
func (r *run) delete(ctx context.Context, ids []types.ObjectIdentifier) error {
	for len(ids) > 0 {
		n := min(len(ids), r.o.Page)
		cctx, cancel := r.call(ctx)
		out, err := r.s3.DeleteObjects(cctx, &s3.DeleteObjectsInput{Bucket: aws.String(r.o.Bucket),
			Delete: &types.Delete{Objects: ids[:n], Quiet: aws.Bool(true)}})
		cancel()
		if err != nil {
			return fmt.Errorf("reconcile: delete %d keys: %w", n, err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("reconcile: delete %s (version %s): %s %s (and %d more errors)", aws.ToString(e.Key),
				aws.ToString(e.VersionId), aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1)
		}
		ids = ids[n:]
	}
	return nil
}

// rowsBatch is how many rows with a picture walkRows reads at a time.
const rowsBatch = 1000

// walkRows reports the pictures rows name whose keys are not current after the walk.
func (r *run) walkRows(ctx context.Context) error {
	for _, owner := range []imageset.Owner{imageset.Users, imageset.Contributors} {
		var after int64
		for {
			cctx, cancel := r.call(ctx)
			rows, err := r.db.NamedImagesAfter(cctx, owner, after, rowsBatch)
			cancel()
			if err != nil {
				return fmt.Errorf("reconcile: %w", err)
			}
			for _, row := range rows {
				set, err := imageset.ParseRef(row.Ref)
				if err != nil {
					fmt.Fprintf(r.o.Out, "missing %s of %s %d: not a picture reference\n", row.Ref, owner, row.ID)
					r.rep.Missing++
					continue
				}
				for _, k := range set.Keys() {
					if r.current[k] {
						continue
					}
					r.rep.Missing++
					fmt.Fprintf(r.o.Out, "missing %s (named by %s %d): no version left\n", k, owner, row.ID)
					if len(r.rep.MissingOf) < 100 && !slices.Contains(r.rep.MissingOf, row.Ref) {
						r.rep.MissingOf = append(r.rep.MissingOf, row.Ref)
					}
				}
			}
			if len(rows) < rowsBatch {
				break
			}
			after = rows[len(rows)-1].ID
		}
	}
	return nil
}

// Summary is the report as one line.
func (r Report) Summary() string {
	return fmt.Sprintf("reconcile: %d keys in %d pages: %d named, %d restored, %d unnamed (%d removed), %d missing, %d recent left alone, %d outside the layout, in %s",
		r.Keys, r.Pages, r.Named, r.Restored, r.Unnamed, r.Removed, r.Missing, r.Recent, r.Foreign, r.Elapsed.Round(time.Millisecond))
}
