package app

import (
	"log/slog"

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
}

// openProposals opens the proposals file of the registry a server edits
// (it holds the registry's lock) and hands it to the tools. A failure is
// logged, and the server runs without taking proposals: they are not worth
// refusing to serve for.
func openProposals(c Proposals, h *tools.Handlers, regPath string, log *slog.Logger) *proposals.Store {
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
	log.Info("taking proposals", "proposals", path, "pending", s.Pending(), "max_pending", c.Options.MaxPending, "rate_per_hour", rate.Rate, "total_rate_per_hour", rate.Total, "ipv6_prefix", rate.IPv6Prefix)
	return s
}
