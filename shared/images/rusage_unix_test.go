//go:build unix

package images

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSSOf returns the maximum resident set size, in bytes, of an exited
// process, or 0 when the system does not say.
func maxRSSOf(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // kilobytes elsewhere
}
