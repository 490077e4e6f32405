//go:build unix && !linux

package localservices

import "syscall"

// sysProcAttr puts the child in a process group of its own. This platform has no
// parent-death signal: children of a killed parent must be stopped by hand.
func sysProcAttr(_ syscall.Signal, cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}
