package main

import (
	"sync"
	"time"

	"github.com/otel-sentry/sentryexporter/internal/atomicfile"
)

// Totals are what arrived, as written to --summary-file.
type Totals struct {
	UptimeSeconds float64 `json:"uptime_seconds"`
	Requests      uint64  `json:"requests"`
	Spans         uint64  `json:"spans"`
	Logs          uint64  `json:"logs"`
	// MetricPoints counts metric data points.
	MetricPoints uint64 `json:"metric_points"`
	// ProfileSamples counts profile samples, one per timestamp.
	ProfileSamples uint64 `json:"profile_samples"`
	// WireBytes sums the bodies as sent (compressed); DecodedBytes after decompression.
	WireBytes    uint64 `json:"wire_bytes"`
	DecodedBytes uint64 `json:"envelope_bytes"`
	// Invalid counts requests answered 4xx (bad encoding or protobuf).
	Invalid uint64 `json:"invalid_envelopes"`
}

type stats struct {
	mu    sync.Mutex
	start time.Time
	t     Totals
}

func newStats(now time.Time) *stats { return &stats{start: now} }

// items are what one request carried.
type items struct{ spans, logs, points, samples int }

func (s *stats) accepted(n items, wire, decoded int) {
	s.mu.Lock()
	s.t.Requests++
	s.t.Spans += uint64(n.spans)
	s.t.Logs += uint64(n.logs)
	s.t.MetricPoints += uint64(n.points)
	s.t.ProfileSamples += uint64(n.samples)
	s.t.WireBytes += uint64(wire)
	s.t.DecodedBytes += uint64(decoded)
	s.mu.Unlock()
}

func (s *stats) invalid() {
	s.mu.Lock()
	s.t.Requests++
	s.t.Invalid++
	s.mu.Unlock()
}

func (s *stats) snapshot(now time.Time) Totals {
	s.mu.Lock()
	t := s.t
	s.mu.Unlock()
	t.UptimeSeconds = now.Sub(s.start).Seconds()
	return t
}

// writeFile replaces path atomically, so a reader never sees half a file.
func (t Totals) writeFile(path string) error {
	return atomicfile.WriteJSON(path, t)
}
