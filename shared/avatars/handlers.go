package avatars

import (
	"net/http"

	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/audit"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Uploader is the part of the image service the upload and delete routes share;
// *Service satisfies it.
type Uploader interface {
	// Available is apperr.Unavailable on an instance that does not handle uploads.
	Available() error
	// MaxBodyBytes bounds the JSON body of an upload.
	MaxBodyBytes() int64
}

type uploadRequest struct {
	Image *string `json:"image"`
}

// Validate demands a non-blank image.
func (req *uploadRequest) Validate() error {
	if req.Image == nil {
		return apperr.MissingParams()
	}
	return httpapi.Required(*req.Image)
}

// ReadUpload reads an update-image request, body {"image": Base64 or data URL}, for
// the route's handler, which then calls the service once with the id and the image.
// An instance that is not a file service answers 503 (once the caller has passed the
// group's authentication and permission check); a bad id or body is 400. It reports
// false when it has answered.
func ReadUpload(w http.ResponseWriter, r *http.Request, svc Uploader) (id int64, image string, ok bool) {
	id, ok = ReadTarget(w, r, svc)
	if !ok {
		return 0, "", false
	}
	req, err := httpapi.Decode[uploadRequest](w, r, svc.MaxBodyBytes())
	if err != nil {
		httpapi.Error(w, r, err)
		return 0, "", false
	}
	return id, *req.Image, true
}

// ReadTarget reads the id of an image route (a delete-image route has nothing else),
// answering 503 on an instance that is not a file service and 400 for a bad id. It
// reports false when it has answered.
func ReadTarget(w http.ResponseWriter, r *http.Request, svc Uploader) (int64, bool) {
	if err := svc.Available(); err != nil {
		httpapi.Error(w, r, err)
		return 0, false
	}
	id, err := httpapi.PathInt(r, "id")
	if err != nil {
		httpapi.Error(w, r, err)
		return 0, false
	}
	return id, true
}

// Messages are what one owner's image route says: OK on success, Internal for an
// unexpected failure ("" keeps "Internal server error").
type Messages struct {
	OK, Internal string
}

// Answer writes the outcome of the route's call to the service: its error (an
// unexpected one with the route's own 500 message), or the audit record of action on
// kind id and the success message. Deleting when there is no image is a 500, as the
// spec has it (the service's error for it is not an apperr).
func Answer(w http.ResponseWriter, r *http.Request, err error, action, kind string, id int64, msgs Messages) {
	if err != nil {
		httpapi.Error(w, r, apperr.InternalAs(err, msgs.Internal))
		return
	}
	audit.Record(r.Context(), action, kind, id)
	httpapi.OK(w, r, msgs.OK)
}
