package mcp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// process is an MCP server subprocess. Its stdin and stdout are plain
// pipes owned by the provider (exec.Cmd's own pipes would be closed by Wait
// while the SDK may still be reading the last response); its stderr is kept
// as a short tail for error messages and never printed.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our write end of the server's stdin
	stdout *os.File // our read end of the server's stdout
	stderr *tailBuffer
	done   chan struct{} // closed once the process has been waited for
	err    error         // Wait's result, valid after done
}

// stopGrace is how long Close waits for a server to exit on its own after
// its stdin is closed, and again after SIGTERM, before killing it.
const stopGrace = 2 * time.Second

func startProcess(command string, args []string, env []string) (*process, error) {
	cmd := exec.Command(command, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	setProcessGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: &tailBuffer{max: 4096}, done: make(chan struct{})}
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = p.stderr
	// A grandchild that keeps stderr open must not keep Wait from
	// returning once the server itself has exited.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	// The child has its own copies of these ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited waits up to d for the process to end and reports whether it has.
func (p *process) exited(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// describeExit says how the process ended, with the tail of its stderr.
func (p *process) describeExit() string {
	var status string
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		status = "exit status 0"
	case errors.As(p.err, &ee):
		status = ee.ProcessState.String()
	default:
		status = p.err.Error()
	}
	if tail := p.stderr.String(); tail != "" {
		status += "; stderr: " + tail
	}
	return status
}

// stop ends the process: its stdin is already closed by the session, so
// a well-behaved server exits by itself; otherwise SIGTERM, then SIGKILL,
// sent to its whole process group where the platform has them.
func (p *process) stop() {
	if p.exited(stopGrace) {
		return
	}
	_ = terminate(p.cmd)
	if p.exited(stopGrace) {
		return
	}
	_ = kill(p.cmd)
	<-p.done
}

// closePipes closes our ends of the pipes (the SDK connection closes them
// too; closing twice is harmless).
func (p *process) closePipes() {
	p.stdin.Close()
	p.stdout.Close()
}

// displayCommand renders a command line for messages: the program and its
// arguments, quoted when they need it. Environment values never appear.
func displayCommand(command string, args []string) string {
	parts := make([]string, 0, len(args)+1)
	for _, a := range append([]string{command}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\") {
			a = fmt.Sprintf("%q", a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
