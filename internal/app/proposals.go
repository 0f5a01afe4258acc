package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Proposals is how a server takes proposals (propose_change): the store's
// bounds, the per-client rate an hour, the server-wide rate, and the
// prefix an IPv6 client is counted by.
type Proposals struct {
	Options    proposals.Options
	Rate       int
	TotalRate  int
	IPv6Prefix int
	// Take is --proposals: "on", "off", or "auto" (or ""), on when the
	// server edits its registry.
	Take string
}

// openProposals opens the proposals file of the registry a server edits
// (it holds the registry's lock) and hands it to the tools. A failure is
// logged, and the server runs without taking proposals: they are not worth
// refusing to serve for.
func openProposals(c Proposals, h *tools.Handlers, regPath string, log *slog.Logger) *proposals.File {
	path := proposals.PathFor(regPath)
	s, notes, err := proposals.Open(path, c.Options)
	if err != nil {
		log.Warn("taking no proposals: the proposals file cannot be opened", "proposals", path, "err", err)
		return nil
	}
	for _, n := range notes {
		log.Warn(n)
	}
	rate := proposals.NewLimiter(c.Rate, c.TotalRate, c.IPv6Prefix)
	h.SetProposals(s, rate)
	size, max := s.Size()
	log.Info("taking proposals", "proposals", path, "pending", s.Pending(), "max_pending", c.Options.MaxPending, "bytes", size, "max_bytes", max, "rate_per_hour", rate.Rate, "total_rate_per_hour", rate.Total, "ipv6_prefix", rate.IPv6Prefix)
	return s
}

// tidyEvery is how often a server compacts its proposals file: decided
// proposals lose their bodies a day after the decision, and the file is
// read whole at every start, so it is kept small even on a node that
// takes no new proposals (whose writes would otherwise compact it).
const tidyEvery = time.Hour

// tidyProposals compacts s every tidyEvery until ctx ends.
func tidyProposals(ctx context.Context, s *proposals.File, log *slog.Logger) {
	t := time.NewTicker(tidyEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Tidy(); err != nil {
				log.Warn("cannot compact the proposals file; it is compacted again in an hour and at the next start", "err", err)
			}
		}
	}
}
