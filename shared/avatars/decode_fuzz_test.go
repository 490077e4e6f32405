package avatars

import (
	"testing"

	"github.com/mediacatalog/service/shared/httpapi/httpapitest"
)

// FuzzDecodeUpload fuzzes the body of the two image upload routes (the image data
// itself: shared/images' FuzzDecodeInput).
func FuzzDecodeUpload(f *testing.F) {
	httpapitest.FuzzDecode[uploadRequest](f,
		`{"image":"data:image/png;base64,iVBORw0KGgo="}`,
		`{"image":"iVBORw0KGgo="}`,
		`{"image":""}`,
		`{"image":"\u0000"}`,
		`{"image":null}`)
}
