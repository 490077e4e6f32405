package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// pngOf returns a PNG declaring w x h at 16-bit RGBA with no pixel data:
// enough for the header checks.
func pngOf(w, h uint32) []byte {
	chunk := func(out []byte, typ string, data []byte) []byte {
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		start := len(out)
		out = append(append(out, typ...), data...)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	out := chunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", append(ihdr, 16, 6, 0, 0, 0))
	return chunk(out, "IEND", nil)
}

func TestRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is in Linux's /proc")
	}
	var small bytes.Buffer
	if err := png.Encode(&small, image.NewGray(image.Rect(0, 0, 64, 48))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		file []byte
		args []string
		want string
	}{
		{"accepted", small.Bytes(), nil, `^vmhwm_kib=[1-9][0-9]* accepted=true\n$`},
		{"over the decoder bound", pngOf(7000, 7000), nil, `^vmhwm_kib=[1-9][0-9]* accepted=false refusal="Image too large once decoded"\n$`},
		{"over a lower pixel limit", small.Bytes(), []string{"-max-pixels", "100"}, `^vmhwm_kib=[1-9][0-9]* accepted=false refusal="Image too large"\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "in")
			if err := os.WriteFile(file, tt.file, 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if err := run(append(tt.args, file), &out, &errOut); err != nil {
				t.Fatalf("run: %v (%s)", err, errOut.String())
			}
			if !regexp.MustCompile(tt.want).MatchString(out.String()) {
				t.Errorf("output %q, want %s", out.String(), tt.want)
			}
		})
	}
}
