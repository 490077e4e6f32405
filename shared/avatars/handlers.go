package avatars

import (
	"context"
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

// Route describes one owner's image route: what it does, what it says on success,
// the 500 message of an unexpected failure ("" keeps "Internal server error"), and the
// kind of owner ("user", "contributor") its audit records name.
type Route struct {
	Service  Uploader
	Kind     string
	OK       string
	Internal string
	Update   func(ctx context.Context, id int64, encoded string) error
	Delete   func(ctx context.Context, id int64) error
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

// UploadHandler answers an update-image route: body {"image": Base64 or data URL}.
// An instance that is not a file service answers 503 (once the caller has passed the
// group's authentication and permission check); bad image data is 400 and stores
// nothing.
func UploadHandler(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := rt.Service.Available(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := httpapi.Decode[uploadRequest](w, r, rt.Service.MaxBodyBytes())
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if err := rt.Update(r.Context(), id, *req.Image); err != nil {
			httpapi.Error(w, r, rt.internal(err))
			return
		}
		audit.Record(r.Context(), rt.Kind+".image.update", rt.Kind, id)
		httpapi.OK(w, r, rt.OK)
	})
}

// DeleteHandler answers a delete-image route. Deleting when there is no image is a
// 500, as the spec has it.
func DeleteHandler(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := rt.Service.Available(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		id, err := httpapi.PathInt(r, "id")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if err := rt.Delete(r.Context(), id); err != nil {
			httpapi.Error(w, r, rt.internal(err))
			return
		}
		audit.Record(r.Context(), rt.Kind+".image.delete", rt.Kind, id)
		httpapi.OK(w, r, rt.OK)
	})
}

// internal gives an unexpected failure the route's own 500 message.
func (rt Route) internal(err error) error {
	if rt.Internal != "" && apperr.CodeOf(err) == apperr.Internal {
		return apperr.Wrap(apperr.Internal, rt.Internal, err)
	}
	return err
}
