//go:build !unix

package images

import "os"

// maxRSSOf returns 0: this system does not report a process's peak memory.
func maxRSSOf(*os.ProcessState) int64 { return 0 }
