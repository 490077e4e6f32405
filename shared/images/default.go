package images

import (
	"bytes"
	_ "embed"

	"github.com/mediacatalog/service/shared/imageset"
)

//go:generate go run ./internal/gendefault -out default

// The default avatars: a neutral silhouette, opaque PNG, one per size.
var (
	//go:embed default/high.png
	defaultHigh []byte
	//go:embed default/scaled.png
	defaultScaled []byte
)

// DefaultAvatar returns the image served for a user or contributor without
// one of their own: res imageset.High gives the HighSize square, anything else (the
// spec's default, imageset.Scaled) the ScaledSize square. Data is the caller's own
// copy.
func DefaultAvatar(res string) Rendition {
	if res == imageset.High {
		return Rendition{Data: bytes.Clone(defaultHigh), ContentType: TypePNG, Width: HighSize, Height: HighSize}
	}
	return Rendition{Data: bytes.Clone(defaultScaled), ContentType: TypePNG, Width: ScaledSize, Height: ScaledSize}
}
