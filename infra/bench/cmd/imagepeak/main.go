// Command imagepeak takes one image file through the upload pipeline
// (images.Process on its Base64 text, with the default limits unless told
// otherwise) in a fresh process and prints the process's peak resident memory,
// VmHWM from /proc/self/status, with the outcome:
//
//	go run ./infra/bench/cmd/imagepeak photo.jpg
//	vmhwm_kib=48212 accepted=true
//	vmhwm_kib=9120 accepted=false refusal="Image too large once decoded"
//
// The benchmark BenchmarkDecoderPeak of shared/images runs it on the worst
// accepted image of each kind (docs/performance.md, "Image decoder peak
// memory"). Linux only: VmHWM is the high-water mark of this process's own
// memory, which a fresh exec starts from zero (unlike getrusage's maxrss,
// which a child inherits from the process that forked it).
package main

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mediacatalog/service/infra/bench/procstatus"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/apperr"
	"github.com/mediacatalog/service/shared/images"
)

func main() {
	// The functions' collector target, so that the peak is the one they reach.
	app.TuneGC(os.Getenv)
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "imagepeak:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("imagepeak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lim images.Limits
	fs.IntVar(&lim.MaxBytes, "max-bytes", 0, "IMAGE_MAX_BYTES (0: the default)")
	fs.IntVar(&lim.MaxPixels, "max-pixels", 0, "IMAGE_MAX_PIXELS (0: the default)")
	fs.IntVar(&lim.MaxDecodedBytes, "max-decoded-bytes", 0, "IMAGE_MAX_DECODED_BYTES (0: the default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: imagepeak [flags] FILE")
	}
	raw, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	// The upload arrives as Base64 text; the file's bytes are let go before
	// Process decodes its own copy, as a request's body is.
	text := base64.StdEncoding.EncodeToString(raw)
	raw = nil
	_, err = images.Process(text, lim)
	outcome := "accepted=true"
	if err != nil {
		e, ok := apperr.As(err)
		if !ok {
			return err
		}
		outcome = fmt.Sprintf("accepted=false refusal=%q", e.Message)
	}
	hwm, err := vmHWM()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "vmhwm_kib=%d %s\n", hwm, outcome)
	return err
}

// vmHWM reads this process's peak resident set size, in KiB, from
// /proc/self/status.
func vmHWM() (int64, error) {
	s, err := procstatus.Sizes(os.Getpid(), "VmHWM")
	if err != nil {
		return 0, err
	}
	return int64(s[0] >> 10), nil
}
