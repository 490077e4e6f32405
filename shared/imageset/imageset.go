// Package imageset is the vocabulary of stored images: how the two renditions of an
// uploaded picture are named in the bucket, and the reference to them that a database
// row keeps. It uses the standard library only, so that every function that names an
// image (the cdn, the uploads, the stores) shares it without linking the S3 client or
// the image pipeline.
package imageset

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotFound is returned by a store for an image object that is not there.
var ErrNotFound = errors.New("no such image object")

// ErrAccessDenied is returned by a store that refused to say whether the object is
// there. S3 answers a reader that may not list the bucket this way for a missing key,
// so a reader takes it as a miss (and logs it: a wrong grant looks the same).
var ErrAccessDenied = errors.New("access denied to the image object")

// Image storage layout. Each upload of a picture is stored as two objects under a
// prefix of its own:
//
//	users/<id>/<name>/high.<ext>          users/<id>/<name>/scaled.<ext>
//	contributors/<id>/<name>/image.<ext>  contributors/<id>/<name>/scaled.<ext>
//
// <name> is the first 16 hex digits of the SHA-256 of both renditions, a dash and 8
// random hex digits: the same picture uploaded twice still gets two sets of keys, so a
// new upload never overwrites the objects the database points at, and removing the
// objects of a failed upload can never remove those of a committed one. <ext> is jpg
// or png (both renditions share the format).
//
// The database stores one reference per image set, the Ref: "<owner>/<id>/<name>.<ext>"
// (users.profile_image, contributors.image). ParseRef turns it back into the keys.

// Owner is the kind of record an image belongs to: the first segment of its keys.
type Owner string

// The owners of stored images.
const (
	Users        Owner = "users"
	Contributors Owner = "contributors"
)

// Resolutions of an image set, as GET /user/avatar/{id}/{res} names them.
const (
	High   = "high"
	Scaled = "scaled"
)

// ImageSet names the stored objects of one upload.
type ImageSet struct {
	Owner Owner
	ID    int64
	Name  string
	Ext   string
}

// NewImageSet names a fresh set of objects for owner's record id, whose renditions
// are high and scaled of the given content type (image/jpeg or image/png).
func NewImageSet(owner Owner, id int64, contentType string, high, scaled []byte) (ImageSet, error) {
	ext, err := extension(contentType)
	if err != nil {
		return ImageSet{}, err
	}
	h := sha256.New()
	h.Write(high)
	h.Write(scaled)
	var nonce [4]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return ImageSet{}, fmt.Errorf("s3store: random image name: %w", err)
	}
	name := hex.EncodeToString(h.Sum(nil)[:8]) + "-" + hex.EncodeToString(nonce[:])
	return ImageSet{Owner: owner, ID: id, Name: name, Ext: ext}, nil
}

// ParseRef reads a reference as the database stores it:
// (users|contributors)/<id without leading zeros>/<16 hex>-<8 hex>.(jpg|png), lower-case
// hex. It is parsed by hand rather than with a regular expression compiled at package
// init, which every function linking this package would pay at its cold start.
func ParseRef(ref string) (ImageSet, error) {
	bad := func() (ImageSet, error) {
		return ImageSet{}, fmt.Errorf("s3store: %q is not an image reference", ref)
	}
	parts := strings.Split(ref, "/")
	if len(parts) != 3 {
		return bad()
	}
	owner := Owner(parts[0])
	if owner != Users && owner != Contributors {
		return bad()
	}
	digits := parts[1]
	if len(digits) == 0 || len(digits) > 19 || digits[0] == '0' || !allOf(digits, isDigit) {
		return bad()
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return bad()
	}
	name, ext, ok := strings.Cut(parts[2], ".")
	if !ok || (ext != "jpg" && ext != "png") {
		return bad()
	}
	hash, nonce, ok := strings.Cut(name, "-")
	if !ok || len(hash) != 16 || len(nonce) != 8 || !allOf(hash, isLowerHex) || !allOf(nonce, isLowerHex) {
		return bad()
	}
	return ImageSet{Owner: owner, ID: id, Name: name, Ext: ext}, nil
}

func allOf(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

// Prefix begins the key of every object ever stored for owner's record id, whatever
// its name: "users/3/" (never a prefix of "users/31/...").
func Prefix(owner Owner, id int64) string {
	return fmt.Sprintf("%s/%d/", owner, id)
}

// Ref is the reference the database stores for the set.
func (s ImageSet) Ref() string {
	return fmt.Sprintf("%s/%d/%s.%s", s.Owner, s.ID, s.Name, s.Ext)
}

// Key is the object key of resolution res (High or Scaled).
func (s ImageSet) Key(res string) string {
	file := Scaled
	if res == High {
		file = High
		if s.Owner == Contributors {
			file = "image"
		}
	}
	return fmt.Sprintf("%s/%d/%s/%s.%s", s.Owner, s.ID, s.Name, file, s.Ext)
}

// Keys are the keys of both resolutions.
func (s ImageSet) Keys() []string { return []string{s.Key(High), s.Key(Scaled)} }

// Folder is the prefix of the set's objects and of nothing else's ("users/3/<name>/"):
// its name is the upload's own, so every version under it is the set's.
func (s ImageSet) Folder() string { return fmt.Sprintf("%s/%d/%s/", s.Owner, s.ID, s.Name) }

// ContentType is the content type of the set's objects.
func (s ImageSet) ContentType() string {
	if s.Ext == "png" {
		return "image/png"
	}
	return "image/jpeg"
}

func extension(contentType string) (string, error) {
	switch contentType {
	case "image/jpeg":
		return "jpg", nil
	case "image/png":
		return "png", nil
	}
	return "", fmt.Errorf("s3store: no image extension for content type %q", contentType)
}
