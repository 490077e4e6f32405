// Package images turns uploaded profile pictures and contributor avatars into
// the two square renditions the service stores and serves.
//
// # Input
//
// Process takes Base64 text, standard or URL alphabet, padded or not, with any
// ASCII whitespace ignored, optionally wrapped in a data URL
// ("data:image/png;base64,..."). A data URL that is not Base64-encoded is
// rejected. The real format is sniffed from the magic bytes: JPEG, PNG, GIF
// (first frame) and WebP are accepted; the type a data URL declares is ignored.
//
// Every rejection is an *apperr.Error with code apperr.Invalid and one of the
// Msg* messages, returned before anything could be stored: unsupported formats,
// undecodable or truncated data, a body larger than Limits.MaxBytes (judged
// from the Base64 length, before anything is decoded) and images with more
// than Limits.MaxPixels pixels or whose decoding and scaling would allocate
// more than Limits.MaxDecodedBytes (both judged from the header, before the
// pixels are decoded, so a small file declaring a huge canvas costs nothing).
//
// # Renditions
//
// Both renditions are centre-cropped squares:
//
//	High    512x512 (HighSize)
//	Scaled  128x128 (ScaledSize)
//
// Images are never upscaled: when the shorter side of the source is below a
// size, that rendition keeps the shorter side. A 300x200 upload gives a
// 200x200 High and a 128x128 Scaled; a 100x80 upload gives 80x80 for both.
//
// The EXIF orientation of a JPEG is applied. All metadata (EXIF, XMP, ICC,
// comments) is dropped, as the renditions are re-encoded from pixels. The
// renditions are JPEG (quality 85 for High, 80 for Scaled), or PNG when the
// cropped image actually uses transparency (some alpha below opaque), not
// merely when its color model could carry alpha.
//
// # Speed and memory
//
// The source is decoded once, after its header has shown that everything
// the decoder and the scaling after it allocate fits Limits.MaxDecodedBytes
// (peak.go): the decoded image and the decoder's own working memory, which
// for a progressive JPEG is several times the image (its coefficients), for
// a 4-component JPEG a second, CMYK copy, for an interlaced PNG its passes.
// This bound, not the pixel count, is what keeps the worst accepted upload
// within a function's memory. The centre square is cut out of the decoded
// image without copying it; a large JPEG is box-reduced straight from its
// decoded planes (Y, Cb, Cr, without converting to RGB) by the largest
// integer factor that leaves at least the High size; imaging then scales it
// with a Catmull-Rom filter, and Scaled is derived from High. The orientation
// is applied to the small result. For a 12-megapixel JPEG this allocates a
// third of what decoding with imaging and a Lanczos Fill per size does, half
// of what a Catmull-Rom Fill does, and takes less CPU time than either, the
// decoder's time being most of it; see the benchmarks.
package images

import (
	"bytes"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"

	"github.com/mediacatalog/service/shared/apperr"
)

// Rendition sizes: the side, in pixels, of each square rendition.
const (
	HighSize   = 512
	ScaledSize = 128
)

// Default limits, the same as the service configuration's defaults
// (IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS, IMAGE_MAX_DECODED_BYTES).
//
// DefaultMaxDecodedBytes bounds what decoding and scaling an upload allocate
// (peak.go), so that the worst accepted upload of every format, with a file
// of DefaultMaxBytes, keeps a fresh process under 256 MiB (docs/performance.md,
// "Image decoder peak memory"). It admits a baseline 4:2:0 JPEG of
// DefaultMaxPixels, a progressive one of 25 megapixels, a progressive CMYK one
// of 8, an 8-bit RGBA PNG of 47 and a 16-bit one of 24 (12 interlaced), a
// lossless WebP of 7, as its Huffman tables may take 139 MiB at any size.
const (
	DefaultMaxBytes        = 10 << 20
	DefaultMaxPixels       = 50_000_000
	DefaultMaxDecodedBytes = 200 << 20
)

// Encoder qualities of the JPEG renditions.
const (
	HighQuality   = 85
	ScaledQuality = 80
)

// Client-facing messages of the errors Process returns.
const (
	MsgInvalidImage      = "Invalid image data"
	MsgNotBase64         = "Image data must be Base64-encoded"
	MsgUnsupportedFormat = "Unsupported image format"
	MsgImageTooLarge     = "Image too large"
	MsgImageTooDeep      = "Image too large once decoded"
)

// Content types of the formats Sniff recognises.
const (
	TypeJPEG = "image/jpeg"
	TypePNG  = "image/png"
	TypeGIF  = "image/gif"
	TypeWebP = "image/webp"
)

// Limits bound what Process accepts. A zero or negative field means the
// package default (DefaultMaxBytes, DefaultMaxPixels, DefaultMaxDecodedBytes).
type Limits struct {
	MaxBytes        int // largest image file (the Base64 decoded), in bytes
	MaxPixels       int // largest width*height
	MaxDecodedBytes int // most memory decoding and scaling may allocate, reckoned from the header
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = DefaultMaxPixels
	}
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = DefaultMaxDecodedBytes
	}
	return l
}

// Rendition is one encoded image, ready to store and serve.
type Rendition struct {
	Data        []byte
	ContentType string // TypeJPEG or TypePNG
	Width       int
	Height      int
}

// Result holds the two renditions of an upload.
type Result struct {
	High   Rendition // at most HighSize x HighSize
	Scaled Rendition // at most ScaledSize x ScaledSize
}

// Process decodes an uploaded image (Base64, optionally a data URL), checks it
// against lim and returns its two renditions. Errors about the input are
// *apperr.Error with code apperr.Invalid; any other error is internal.
func Process(encoded string, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	raw, err := decodeInput(encoded, lim.MaxBytes)
	if err != nil {
		return Result{}, err
	}
	f := sniff(raw)
	if f == formatUnknown {
		return Result{}, apperr.New(apperr.Invalid, MsgUnsupportedFormat)
	}
	cfg, err := f.decodeConfig(bytes.NewReader(raw))
	if err != nil {
		return Result{}, apperr.Wrap(apperr.Invalid, MsgInvalidImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Result{}, apperr.Wrap(apperr.Invalid, MsgInvalidImage,
			fmt.Errorf("%s has an empty canvas %dx%d", f.contentType(), cfg.Width, cfg.Height))
	}
	if int64(cfg.Width)*int64(cfg.Height) > int64(lim.MaxPixels) {
		return Result{}, apperr.Wrap(apperr.Invalid, MsgImageTooLarge,
			fmt.Errorf("%dx%d is more than %d pixels", cfg.Width, cfg.Height, lim.MaxPixels))
	}
	if n := peakBytes(f, raw, cfg.Width, cfg.Height); n > int64(lim.MaxDecodedBytes) {
		return Result{}, apperr.Wrap(apperr.Invalid, MsgImageTooDeep,
			fmt.Errorf("%s %dx%d takes %d bytes to decode and scale, at most %d allowed", f.contentType(), cfg.Width, cfg.Height, n, lim.MaxDecodedBytes))
	}
	orientation := 1
	if f == formatJPEG {
		orientation = jpegOrientation(raw)
	}
	img, err := f.decode(bytes.NewReader(raw))
	if err != nil {
		return Result{}, apperr.Wrap(apperr.Invalid, MsgInvalidImage, err)
	}
	if img.Bounds().Empty() {
		return Result{}, apperr.Wrap(apperr.Invalid, MsgInvalidImage,
			fmt.Errorf("%s decoded to an empty image", f.contentType()))
	}
	return render(img, orientation)
}

// Sniff reports the content type of an encoded image from its magic bytes,
// and whether it is one of the accepted formats (JPEG, PNG, GIF, WebP).
func Sniff(b []byte) (contentType string, ok bool) {
	f := sniff(b)
	return f.contentType(), f != formatUnknown
}

type format int

const (
	formatUnknown format = iota
	formatJPEG
	formatPNG
	formatGIF
	formatWebP
)

func sniff(b []byte) format {
	switch {
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return formatJPEG
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		return formatPNG
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		return formatGIF
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return formatWebP
	}
	return formatUnknown
}

func (f format) contentType() string {
	switch f {
	case formatJPEG:
		return TypeJPEG
	case formatPNG:
		return TypePNG
	case formatGIF:
		return TypeGIF
	case formatWebP:
		return TypeWebP
	}
	return ""
}

func (f format) decodeConfig(r io.Reader) (image.Config, error) {
	switch f {
	case formatJPEG:
		return jpeg.DecodeConfig(r)
	case formatPNG:
		return png.DecodeConfig(r)
	case formatGIF:
		return gif.DecodeConfig(r)
	case formatWebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("unknown format")
}

func (f format) decode(r io.Reader) (image.Image, error) {
	switch f {
	case formatJPEG:
		return jpeg.Decode(r)
	case formatPNG:
		return png.Decode(r)
	case formatGIF:
		return gif.Decode(r)
	case formatWebP:
		return webp.Decode(r)
	}
	return nil, fmt.Errorf("unknown format")
}
