package main

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/atomicfile"
)

// Totals are the sink's counters, as written to --summary-file.
type Totals struct {
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds float64   `json:"uptime_seconds"`

	// Requests counts every HTTP request by the status it was answered with.
	Requests       uint64            `json:"requests"`
	RequestsStatus map[string]uint64 `json:"requests_by_status"`

	// Envelopes counts the envelopes accepted (answered 200).
	Envelopes uint64 `json:"envelopes"`
	// Items counts the accepted items by type.
	Items map[string]uint64 `json:"items"`
	// ItemCount sums item_count of accepted containers by type (log, span, trace_metric).
	ItemCount map[string]uint64 `json:"item_count"`
	// TransactionSpans sums the child spans of accepted transactions.
	TransactionSpans uint64 `json:"transaction_spans"`
	// Spans is every span that arrived: one per transaction (its root), its children,
	// and the spans of span v2 containers.
	Spans uint64 `json:"spans"`
	// Logs sums item_count of accepted log containers.
	Logs uint64 `json:"logs"`
	// TraceMetrics sums item_count of accepted trace_metric containers.
	TraceMetrics uint64 `json:"trace_metrics"`
	// Errors counts accepted error events.
	Errors uint64 `json:"errors"`
	// ProfileChunks counts accepted profile_chunk items, and ProfileSamples their samples.
	ProfileChunks  uint64 `json:"profile_chunks"`
	ProfileSamples uint64 `json:"profile_samples"`
	// ProfileAppFunctions counts, per "platform module function" Sentry's profile
	// processing reads as application code, the chunks it is in (at most
	// maxAppFunctions names; the rest go under "other").
	ProfileAppFunctions map[string]uint64 `json:"profile_app_functions"`
	// ClientReports are the discarded_events of ingested client reports, summed
	// by "reason/category".
	ClientReports map[string]uint64 `json:"client_report_discarded"`
	// ByProject is what each project (by id) received; Spans, Logs, TraceMetrics, Errors and
	// ClientReports above are its sums.
	ByProject map[string]ProjectTotals `json:"by_project"`
	// ContentEncoding counts accepted envelopes by Content-Encoding ("identity" if none).
	ContentEncoding map[string]uint64 `json:"content_encoding"`
	// WireBytes and EnvelopeBytes sum the body sizes before and after decompression.
	WireBytes     uint64 `json:"wire_bytes"`
	EnvelopeBytes uint64 `json:"envelope_bytes"`

	// Invalid counts envelopes rejected as malformed, invalid or too large (400/413/415).
	Invalid uint64 `json:"invalid_envelopes"`
	// LastInvalid is the first cause of the most recent invalid envelope.
	LastInvalid string `json:"last_invalid,omitempty"`
	// RateLimited counts envelopes answered 429, and RateLimitedItems their items by type.
	RateLimited      uint64            `json:"rate_limited_envelopes"`
	RateLimitedItems map[string]uint64 `json:"rate_limited_items"`
	// Aborted counts requests whose client went away during --delay or --hang.
	Aborted uint64 `json:"aborted"`
	// Held is the requests --hang (or a down window of --hang-for, --flap) holds
	// open now, and MaxHeld the most at once.
	Held    int64 `json:"held"`
	MaxHeld int64 `json:"max_held"`
	// FaultOriginMs is when the first request arrived (Unix milliseconds), the
	// origin of --hang-at, --hang-for and --flap; 0 without them or before it.
	FaultOriginMs int64 `json:"fault_origin_unix_ms"`
}

// ProjectTotals is what one project received, counted as in Totals.
type ProjectTotals struct {
	Envelopes     uint64            `json:"envelopes"`
	Transactions  uint64            `json:"transactions"`
	Spans         uint64            `json:"spans"`
	Logs          uint64            `json:"logs"`
	TraceMetrics  uint64            `json:"trace_metrics"`
	Errors        uint64            `json:"errors"`
	ClientReports map[string]uint64 `json:"client_report_discarded"`
	// ProfileChunks counts accepted profile_chunk items, and ProfileSamples their samples.
	ProfileChunks  uint64 `json:"profile_chunks"`
	ProfileSamples uint64 `json:"profile_samples"`
}

// stats collects Totals from concurrent requests, and, with --timeline-file,
// what each second of the wall clock saw.
type stats struct {
	mu sync.Mutex
	t  Totals
	tl *timeline
}

func newStats(now time.Time) *stats {
	return &stats{t: Totals{
		StartedAt:        now.UTC(),
		RequestsStatus:   map[string]uint64{},
		Items:            map[string]uint64{},
		ItemCount:        map[string]uint64{},
		ByProject:        map[string]ProjectTotals{},
		ContentEncoding:  map[string]uint64{},
		RateLimitedItems: map[string]uint64{},
	}}
}

func (s *stats) request(status int) {
	s.mu.Lock()
	s.t.Requests++
	s.t.RequestsStatus[statusKey(status)]++
	if s.tl != nil {
		s.tl.request(time.Now(), status, s.t.Held)
	}
	s.mu.Unlock()
}

// origin records when the first request arrived (--hang-at, --hang-for, --flap).
func (s *stats) origin(t time.Time) {
	s.mu.Lock()
	if s.t.FaultOriginMs == 0 {
		s.t.FaultOriginMs = t.UnixMilli()
	}
	s.mu.Unlock()
}

func (s *stats) invalid(cause string) {
	s.mu.Lock()
	s.t.Invalid++
	s.t.LastInvalid = truncate(cause, 500)
	s.mu.Unlock()
}

func (s *stats) held(delta int64) {
	s.mu.Lock()
	s.t.Held += delta
	s.t.MaxHeld = max(s.t.MaxHeld, s.t.Held)
	if s.tl != nil {
		s.tl.at(time.Now(), s.t.Held)
	}
	s.mu.Unlock()
}

func (s *stats) aborted() {
	s.mu.Lock()
	s.t.Aborted++
	s.mu.Unlock()
}

// rateLimited counts an envelope answered 429. reports, when not nil, is its
// summary: its client reports were ingested all the same (Relay's partial
// ingestion) and are counted like accepted ones.
func (s *stats) rateLimited(project string, env *envelope.Envelope, reports *envSummary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t.RateLimited++
	for i := range env.Items {
		s.t.RateLimitedItems[env.Items[i].Type]++
	}
	if reports == nil {
		return
	}
	p := s.t.ByProject[project]
	for _, it := range reports.items {
		if it.typ == envelope.ItemTypeClientReport {
			p.reported(it.discarded)
		}
	}
	s.t.ByProject[project] = p
}

// reported adds a client report's discarded events.
func (p *ProjectTotals) reported(discarded []discard) {
	for _, d := range discarded {
		if p.ClientReports == nil {
			p.ClientReports = map[string]uint64{}
		}
		p.ClientReports[d.Reason+"/"+d.Category] += d.Quantity
	}
}

func (s *stats) accepted(project, encoding string, wire, size int, sum *envSummary) {
	if encoding == "" {
		encoding = "identity"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &s.t
	t.Envelopes++
	p := t.ByProject[project]
	p.Envelopes++
	t.ContentEncoding[encoding]++
	t.WireBytes += uint64(wire)
	t.EnvelopeBytes += uint64(size)
	for _, it := range sum.items {
		t.Items[it.typ]++
		switch it.typ {
		case envelope.ItemTypeTransaction:
			t.TransactionSpans += uint64(it.spans)
			p.Transactions++
			p.Spans += uint64(it.spans) + 1
		case envelope.ItemTypeSpan:
			t.ItemCount[it.typ] += uint64(it.itemCount)
			p.Spans += uint64(it.itemCount)
		case envelope.ItemTypeLog:
			t.ItemCount[it.typ] += uint64(it.itemCount)
			p.Logs += uint64(it.itemCount)
		case envelope.ItemTypeTraceMetric:
			t.ItemCount[it.typ] += uint64(it.itemCount)
			p.TraceMetrics += uint64(it.itemCount)
		case envelope.ItemTypeEvent:
			p.Errors++
		case envelope.ItemTypeClientReport:
			p.reported(it.discarded)
		case envelope.ItemTypeProfileChunk:
			p.ProfileChunks++
			p.ProfileSamples += uint64(it.samples)
			t.appFunctions(it.appFunctions)
		}
	}
	t.ByProject[project] = p
	if s.tl != nil {
		s.tl.accepted(time.Now(), sum, t.Held)
	}
}

// snapshot returns a deep copy of the totals.
func (s *stats) snapshot(now time.Time) Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t
	t.UptimeSeconds = now.Sub(t.StartedAt).Seconds()
	t.RequestsStatus = maps.Clone(t.RequestsStatus)
	t.Items = maps.Clone(t.Items)
	t.ItemCount = maps.Clone(t.ItemCount)
	t.ClientReports = map[string]uint64{}
	t.ByProject = maps.Clone(t.ByProject)
	for k, p := range t.ByProject {
		t.Spans += p.Spans
		t.Logs += p.Logs
		t.TraceMetrics += p.TraceMetrics
		t.Errors += p.Errors
		t.ProfileChunks += p.ProfileChunks
		t.ProfileSamples += p.ProfileSamples
		for r, n := range p.ClientReports {
			t.ClientReports[r] += n
		}
		p.ClientReports = maps.Clone(p.ClientReports)
		t.ByProject[k] = p
	}
	t.ContentEncoding = maps.Clone(t.ContentEncoding)
	t.RateLimitedItems = maps.Clone(t.RateLimitedItems)
	t.ProfileAppFunctions = maps.Clone(t.ProfileAppFunctions)
	return t
}

// maxAppFunctions bounds the function names ProfileAppFunctions holds.
const maxAppFunctions = 1000

func (t *Totals) appFunctions(names []string) {
	for _, f := range names {
		if t.ProfileAppFunctions == nil {
			t.ProfileAppFunctions = map[string]uint64{}
		}
		if _, ok := t.ProfileAppFunctions[f]; !ok && len(t.ProfileAppFunctions) >= maxAppFunctions {
			f = "other"
		}
		t.ProfileAppFunctions[f]++
	}
}

// statsLine is the one-line summary printed every --stats-every: totals and the rate
// since the previous line.
func statsLine(cur, prev Totals) string {
	dt := cur.UptimeSeconds - prev.UptimeSeconds
	rate := func(a, b uint64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(a-b) / dt
	}
	return fmt.Sprintf("stats t=%.0fs requests=%d envelopes=%d (%.0f/s) transactions=%d spans=%d (%.0f/s) logs=%d (%.0f/s) trace_metrics=%d (%.0f/s) errors=%d client_reports=%d invalid=%d rate_limited=%d",
		cur.UptimeSeconds, cur.Requests, cur.Envelopes, rate(cur.Envelopes, prev.Envelopes),
		cur.Items[envelope.ItemTypeTransaction], cur.Spans, rate(cur.Spans, prev.Spans),
		cur.Logs, rate(cur.Logs, prev.Logs), cur.TraceMetrics, rate(cur.TraceMetrics, prev.TraceMetrics), cur.Errors, cur.Items[envelope.ItemTypeClientReport],
		cur.Invalid, cur.RateLimited)
}

// writeSummary writes t as indented JSON to path, atomically (temp file and rename).
func writeSummary(path string, t Totals) error {
	return atomicfile.WriteJSON(path, t)
}
