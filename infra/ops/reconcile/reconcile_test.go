package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mediacatalog/service/infra/ops/reconcile"
	"github.com/mediacatalog/service/infra/tests/motoserver"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/s3store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const bucket = "media-catalog-images"

// versioned returns an S3 client of moto's server, which implements versioning as S3
// does (delete markers, ListObjectVersions, removing a marker makes the version
// beneath it current), with a versioned bucket. gofakes3, the local stack's S3, does
// not: removing the latest delete marker leaves its key without a current version.
func versioned(t *testing.T) *s3.Client {
	t.Helper()
	url := motoserver.Start(t)
	env := map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	client := s3store.NewClient(awsconfig.ForEndpoint("us-east-1", url, func(k string) string { return env[k] }), url)
	ctx := context.Background()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	return client
}

func put(t *testing.T, c *s3.Client, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k),
			Body: strings.NewReader("picture " + k), ContentType: aws.String("image/png")}); err != nil {
			t.Fatal(err)
		}
	}
}

func del(t *testing.T, c *s3.Client, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
}

// current lists the bucket's current keys.
func current(t *testing.T, c *s3.Client) []string {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

func keys(ref string) []string {
	owner, rest, _ := strings.Cut(ref, "/")
	id, name, _ := strings.Cut(rest, "/")
	base, ext, _ := strings.Cut(name, ".")
	high := "high"
	if owner == "contributors" {
		high = "image"
	}
	return []string{owner + "/" + id + "/" + base + "/" + high + "." + ext, owner + "/" + id + "/" + base + "/scaled." + ext}
}

// TestReconcile: after a restore, the picture a restored row names that was deleted
// since is current again, an object no restored row names is listed and, when told,
// removed, a named picture without any version is reported missing, what is outside
// the layout or younger than the settling time is left alone, and a second run finds
// nothing to do. One version per listing page: a key's versions span pages.
func TestReconcile(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	c := versioned(t)
	const (
		kept     = "users/1/1111111111111111-aaaaaaaa.png"        // named, current
		restored = "users/2/2222222222222222-bbbbbbbb.png"        // named, deleted after the restore point
		after    = "users/3/3333333333333333-cccccccc.png"        // uploaded after it: no row names it
		gone     = "contributors/1/4444444444444444-dddddddd.png" // named, every version gone
		replaced = "users/2/5555555555555555-eeeeeeee.png"        // user 2's earlier picture, deleted before
	)
	db.Exec(t, `UPDATE users SET profile_image = CASE id WHEN 1 THEN $1 WHEN 2 THEN $2 END WHERE id IN (1, 2)`, kept, restored)
	db.Exec(t, `UPDATE contributors SET image = $1 WHERE id = 1`, gone)
	put(t, c, keys(kept)...)
	put(t, c, keys(restored)...)
	del(t, c, keys(restored)...)
	put(t, c, keys(after)...)
	put(t, c, keys(replaced)...)
	del(t, c, keys(replaced)...)
	put(t, c, "publishers/kodansha.png", "users/3/notes.txt")

	// Everything was just written: with an hour's settling time nothing is touched.
	rep, err := reconcile.Run(ctx, db.DB, c, reconcile.Options{Bucket: bucket, Delete: true, Settle: time.Hour, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Restored != 0 || rep.Removed != 0 || rep.Recent != 4 {
		t.Errorf("with nothing settled: %s", rep.Summary())
	}

	var out bytes.Buffer
	rep, err = reconcile.Run(ctx, db.DB, c, reconcile.Options{Bucket: bucket, Settle: time.Nanosecond, Page: 1, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Summary())
	if rep.Named != 4 || rep.Restored != 2 || rep.Unnamed != 2 || rep.Removed != 0 || rep.Missing != 2 || rep.Foreign != 2 ||
		!slices.Equal(rep.MissingOf, []string{gone}) || rep.Pages < 10 {
		t.Errorf("first run: %s, missing %v", rep.Summary(), rep.MissingOf)
	}
	for _, line := range []string{"unnamed " + keys(after)[0], "missing " + keys(gone)[1]} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
	want := append(append(append([]string{}, keys(kept)...), keys(restored)...), keys(after)...)
	want = append(want, "publishers/kodansha.png", "users/3/notes.txt")
	slices.Sort(want)
	if got := current(t, c); !slices.Equal(got, want) {
		t.Errorf("current after a listing run %v, want %v", got, want)
	}
	obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(keys(restored)[0])})
	if err != nil {
		t.Fatal(err)
	}
	obj.Body.Close()
	if aws.ToString(obj.ContentType) != "image/png" {
		t.Errorf("restored picture's content type %q", aws.ToString(obj.ContentType))
	}

	rep, err = reconcile.Run(ctx, db.DB, c, reconcile.Options{Bucket: bucket, Delete: true, Settle: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Restored != 0 || rep.Unnamed != 2 || rep.Removed != 2 {
		t.Errorf("removing run: %s", rep.Summary())
	}
	want = slices.DeleteFunc(want, func(k string) bool { return slices.Contains(keys(after), k) })
	if got := current(t, c); !slices.Equal(got, want) {
		t.Errorf("current after a removing run %v, want %v", got, want)
	}
	// The removed objects stay recoverable: a delete marker over each.
	versions, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String("users/3/3333")})
	if err != nil || len(versions.Versions) != 2 || len(versions.DeleteMarkers) != 2 {
		t.Errorf("versions of the removed objects: %d versions, %d markers (%v)", len(versions.Versions), len(versions.DeleteMarkers), err)
	}

	rep, err = reconcile.Run(ctx, db.DB, c, reconcile.Options{Bucket: bucket, Delete: true, Settle: time.Nanosecond})
	if err != nil || rep.Restored != 0 || rep.Unnamed != 0 || rep.Missing != 2 {
		t.Errorf("second run: %s (%v)", rep.Summary(), err)
	}
	// A deleted user's pictures are not brought back: no row names them.
	db.Exec(t, `DELETE FROM users WHERE id = 2`)
	del(t, c, keys(restored)...)
	rep, err = reconcile.Run(ctx, db.DB, c, reconcile.Options{Bucket: bucket, Delete: true, Settle: time.Nanosecond})
	if err != nil || rep.Restored != 0 || slices.ContainsFunc(current(t, c), func(k string) bool { return strings.HasPrefix(k, "users/2/") }) {
		t.Errorf("after the user's deletion: %s (%v), current %v", rep.Summary(), err, current(t, c))
	}
}

// TestReconcileFailures: a listing or a removal that fails ends the run with its error.
func TestReconcileFailures(t *testing.T) {
	ctx := context.Background()
	db := testenv.NewDemoDB(t)
	c := versioned(t)
	if _, err := reconcile.Run(ctx, db.DB, c, reconcile.Options{Bucket: "no-such-bucket"}); err == nil {
		t.Error("no error for a missing bucket")
	}
	if _, err := reconcile.Run(ctx, db.DB, c, reconcile.Options{}); err == nil {
		t.Error("no error without a bucket")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := reconcile.Run(cancelled, db.DB, c, reconcile.Options{Bucket: bucket}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled run: %v", err)
	}
}
