package localservices

import "syscall"

// sysProcAttr puts the child in a process group of its own and has the kernel send it
// deathSig when this process dies, so no child outlives a killed parent.
func sysProcAttr(deathSig syscall.Signal, cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig, Credential: cred}
}
