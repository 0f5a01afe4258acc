package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/tools"
)

// renewEvery is how often a server holding the curator key checks whether
// its registry's signature needs renewing (Handlers.Renew): often enough
// for the shortest validity --expires allows (an hour).
const renewEvery = 5 * time.Minute

// renewLoop keeps the served registry's signature from expiring while
// the server runs, until ctx ends. start runs renew once before the
// server answers, so the loop first waits.
func renewLoop(ctx context.Context, h *tools.Handlers, log *slog.Logger) {
	t := time.NewTicker(renewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		renew(h, log)
	}
}

// renew signs the served registry again when its signature has less than
// half the span its curator chose left (Handlers.Renew), for that span.
func renew(h *tools.Handlers, log *slog.Logger) {
	if signed, err := h.Renew(); err != nil {
		log.Warn("could not sign the registry again before its signature expires; it will be retried", "err", err)
	} else if signed {
		log.Info("signed the registry again before its signature expires", "version", h.Published().Registry.Version(), "expires", h.Published().Signature.Expires)
	}
}

// LockForEditing makes this server the registry's one editor, or, when
// another process already is, serves it read-only and says why. Holding
// the lock, it clears what interrupted writes left: temporary files, and
// a partial last line of the audit log.
func LockForEditing(log *slog.Logger, srvd *Served, edit *tools.EditConfig) *safefile.Lock {
	lock, err := safefile.TryLock(srvd.Path)
	if err != nil {
		edit.ReadOnly = "This server serves " + srvd.Name + " read-only: " + err.Error() + ", another 3gs that edits it. Make the change through that server, or stop it and restart this one, so that changes cannot overwrite each other."
		log.Warn("the registry is locked by another process; serving it read-only (curator tools refuse)", "registry", srvd.Name, "why", err.Error())
		return nil
	}
	if n, err := store.RemoveStale(srvd.Path, time.Now()); err == nil && n > 0 {
		log.Info("removed temporary files left by interrupted writes", "registry", srvd.Name, "files", n)
	}
	return lock
}
