// Package procstatus reads a process's memory sizes (VmRSS, VmHWM, RssAnon, ...) from
// Linux's /proc/<pid>/status, for the benchmarks that report what a process holds.
package procstatus

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Sizes returns the sizes named, in bytes, in the order named, of process pid
// (os.Getpid() for this one). A name the file lacks is an error.
func Sizes(pid int, names ...string) ([]uint64, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sizes, err := parse(f, names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sizes, nil
}

// parse reads the "Name:   1234 kB" lines of names out of a status file.
func parse(r io.Reader, names []string) ([]uint64, error) {
	out := make([]uint64, len(names))
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		i := slices.Index(names, name)
		if !ok || i < 0 {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return nil, fmt.Errorf("%s %q is not a size in kB", name, rest)
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[i] = kb << 10
		found++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if found != len(names) {
		return nil, fmt.Errorf("not all of %v", names)
	}
	return out, nil
}
