//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func setProcessGroup(cmd *exec.Cmd) {}

func terminate(cmd *exec.Cmd) error {
	return cmd.Process.Signal(os.Interrupt)
}

func kill(cmd *exec.Cmd) error {
	return cmd.Process.Kill()
}
