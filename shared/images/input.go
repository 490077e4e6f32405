package images

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/mediacatalog/service/shared/apperr"
)

// b64class classifies each byte of Base64 text: a character of either
// alphabet, whitespace, padding, or anything else.
var b64class = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = b64Char
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = b64Char
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = b64Char
	}
	for _, c := range "+/-_" {
		t[c] = b64Char
	}
	for _, c := range " \t\r\n\f\v" {
		t[c] = b64Space
	}
	t['='] = b64Pad
	return t
}()

const (
	b64Invalid uint8 = iota
	b64Char
	b64Space
	b64Pad
)

// decodeInput strips an optional data URL prefix from s and decodes the
// Base64 body, refusing bodies that would decode to more than maxBytes before
// allocating anything for them.
func decodeInput(s string, maxBytes int) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, apperr.Wrap(apperr.Invalid, MsgInvalidImage, errors.New("empty image data"))
	}
	if len(s) >= 5 && strings.EqualFold(s[:5], "data:") {
		meta, body, ok := strings.Cut(s[5:], ",")
		if !ok {
			return nil, apperr.Wrap(apperr.Invalid, MsgInvalidImage, errors.New("data URL without a comma"))
		}
		if !isBase64DataURL(meta) {
			return nil, apperr.Wrap(apperr.Invalid, MsgNotBase64, fmt.Errorf("data URL %q is not Base64", truncate(meta, 64)))
		}
		s = body
	}

	// Cheap bound first, so that a huge body is not even scanned: allow the
	// Base64 of maxBytes twice over for whitespace (MIME line breaks add 3%).
	if int64(len(s)) > 2*(int64(maxBytes)/3+1)*4+1024 {
		return nil, apperr.Wrap(apperr.Invalid, MsgImageTooLarge,
			fmt.Errorf("%d characters of Base64 text, far more than %d bytes need", len(s), maxBytes))
	}
	// Whitespace and padding only make the body smaller than its length
	// says; count its characters only when the length alone is over.
	size := decodedLen(len(s))
	if size > maxBytes {
		chars := 0
		for i := 0; i < len(s); i++ {
			if b64class[s[i]] == b64Char {
				chars++
			}
		}
		if size = decodedLen(chars); size > maxBytes {
			return nil, apperr.Wrap(apperr.Invalid, MsgImageTooLarge,
				fmt.Errorf("%d bytes of image data, at most %d allowed", size, maxBytes))
		}
	}

	// Decode chunk by chunk: normalise to the standard alphabet and drop
	// whitespace and padding into a small buffer, so that the text is never
	// copied whole.
	out := make([]byte, size)
	var chunk [4096]byte // a multiple of 4: only the last chunk is partial
	chars, pad, n, w := 0, 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch b64class[c] {
		case b64Char:
			if pad > 0 {
				return nil, apperr.Wrap(apperr.Invalid, MsgNotBase64, errors.New("data after Base64 padding"))
			}
		case b64Space:
			continue
		case b64Pad:
			pad++
			continue
		default:
			return nil, apperr.Wrap(apperr.Invalid, MsgNotBase64, fmt.Errorf("byte %#02x at offset %d is not Base64", c, i))
		}
		switch c {
		case '-':
			c = '+'
		case '_':
			c = '/'
		}
		chunk[n] = c
		n++
		chars++
		if n == len(chunk) {
			m, err := base64.RawStdEncoding.Decode(out[w:], chunk[:])
			if err != nil {
				return nil, apperr.Wrap(apperr.Invalid, MsgNotBase64, err)
			}
			w, n = w+m, 0
		}
	}
	if chars == 0 {
		return nil, apperr.Wrap(apperr.Invalid, MsgInvalidImage, errors.New("empty image data"))
	}
	if pad > 2 || chars%4 == 1 || (pad > 0 && (chars+pad)%4 != 0) {
		return nil, apperr.Wrap(apperr.Invalid, MsgNotBase64, fmt.Errorf("%d Base64 characters with %d padding", chars, pad))
	}
	if n > 0 {
		m, err := base64.RawStdEncoding.Decode(out[w:], chunk[:n])
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, MsgNotBase64, err)
		}
		w += m
	}
	return out[:w], nil
}

// decodedLen is the number of bytes that n Base64 characters, without
// padding, decode to (at most, when n%4 == 1, which is invalid).
func decodedLen(n int) int { return n/4*3 + [4]int{0, 0, 1, 2}[n%4] }

// isBase64DataURL reports whether the metadata of a data URL (between
// "data:" and the comma) ends with the ";base64" extension.
func isBase64DataURL(meta string) bool {
	i := strings.LastIndexByte(meta, ';')
	return i >= 0 && strings.EqualFold(strings.TrimSpace(meta[i+1:]), "base64")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
