package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// A curator's act needs the registry's one writer. When no server holds
// the registry, the command is that writer: it takes the lock and calls
// the workflow (internal/curation) on the files. When a server holds it,
// the command asks that server, over its local channel (app.CallTool),
// to run the admin tool that calls the same workflow. Either way the
// change, its audit log entry and the actor it names (app.LocalActor)
// are the same.

// writer is who makes a curator's change to a registry: the command
// itself, holding lock, or the server holding it (server set).
type writer struct {
	lock   *safefile.Lock
	server bool
	held   error // why the lock could not be taken: a server holds it
}

// takeWriter takes the registry reg's lock, or finds the server that
// holds it. cmd names the command in messages. ok is false when it said
// why neither can be done.
func takeWriter(env *Env, cmd, reg string) (w writer, ok bool) {
	// The lock file is made beside the registry, so a missing registry is
	// reported first rather than leaving a stray lock behind.
	if _, err := os.Stat(reg); err != nil {
		problem, fix := registryProblem(reg, err, "")
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %s\nFix: %s.\n", cmd, problem, fix)
		return w, false
	}
	lock, err := safefile.TryLock(reg)
	switch {
	case err == nil:
		return writer{lock: lock}, true
	case errors.Is(err, safefile.ErrHeld):
		return writer{server: true, held: err}, true
	}
	fmt.Fprintf(env.Stderr, "3gs %s: not changed: %v\n", cmd, err)
	return w, false
}

// release lets the lock go, when the command held it.
func (w writer) release() {
	if w.lock != nil {
		w.lock.Unlock()
	}
}

// callServer asks the server holding reg to run the admin tool with
// args, and says what it answered: the tool's text on stdout, or why it
// refused on stderr. keyIgnored notes that the key given here was not
// used: the server signs with its own.
func (w writer) callServer(env *Env, cmd, reg, tool string, args any, keyIgnored bool) int {
	res, err := app.CallTool(reg, tool, args)
	var ce *app.CallError
	switch {
	case errors.Is(err, app.ErrNoServer):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %v.\nA 3gs server is serving this registry and holds its lock, and its local channel (%s) does not answer, so a change here could be overwritten by it. Stop that server, run this command again, then start the server.\n", cmd, w.held, app.LocalSocket(reg))
		return ExitFail
	case errors.As(err, &ce):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: the 3gs server editing %s refused: %v\n", cmd, reg, ce)
		return ExitFail
	case err != nil:
		fmt.Fprintf(env.Stderr, "3gs %s: the 3gs server editing %s did not answer (%v); it may or may not have made the change: check with 3gs audit log %s\n", cmd, reg, err, reg)
		return ExitFail
	case res.IsError:
		fmt.Fprintf(env.Stderr, "3gs %s: the 3gs server editing %s answered: %s\n", cmd, reg, res.Text())
		return ExitFail
	}
	fmt.Fprintf(env.Stdout, "Done by the 3gs server editing %s, through its local channel, as %s: %s\n", reg, app.LocalActor(), res.Text())
	if keyIgnored {
		fmt.Fprintln(env.Stderr, "Note: the server signs with the curator key it holds; the --key-file and --expires given here were not used.")
	}
	return ExitOK
}
