package procstatus

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const status = "Name:\tbootstrap\nVmPeak:\t 1234567 kB\nVmHWM:\t   31744 kB\nVmRSS:\t   30720 kB\nRssAnon:\t   12288 kB\nThreads:\t6\n"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		text   string
		names  []string
		want   []uint64
		hasErr bool
	}{
		{"in the order named", status, []string{"VmRSS", "VmHWM"}, []uint64{30720 << 10, 31744 << 10}, false},
		{"one", status, []string{"RssAnon"}, []uint64{12288 << 10}, false},
		{"a name the file lacks", status, []string{"VmHWM", "VmSwap"}, nil, true},
		{"not a size", status, []string{"Threads"}, nil, true},
		{"a prefix is not the name", "VmHWMx:\t 1 kB\n", []string{"VmHWM"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(strings.NewReader(tc.text), tc.names)
			if (err != nil) != tc.hasErr || !slices.Equal(got, tc.want) {
				t.Errorf("parse = %v, %v; want %v, error %v", got, err, tc.want, tc.hasErr)
			}
		})
	}
}

func TestSizesOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/status is Linux's")
	}
	s, err := Sizes(os.Getpid(), "VmHWM", "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	if s[0] == 0 || s[1] == 0 || s[1] > s[0] {
		t.Errorf("VmHWM %d, VmRSS %d: want both set, the resident set at most its peak", s[0], s[1])
	}
}
