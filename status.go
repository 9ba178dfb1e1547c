// Component status: the exporter tells the collector's health reporting
// (the healthcheckv2 extension, component status) how its projects' Sentry
// answers. It is in the root because component status belongs to the
// component: the send stage only keeps each project's Health.

package sentryexporter

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/otel-sentry/sentryexporter/internal/send"
)

const (
	// statusTick is how often the projects' health is looked at.
	statusTick = time.Second
	// unreachableAfter is how long a project may get no answer, or only
	// 5xx, before the exporter reports a recoverable error: longer than a
	// brownout's retries of one envelope take to succeed at the default
	// backoff, shorter than an operator's patience.
	unreachableAfter = time.Minute
)

// statusReporter reports the exporter's status to every pipeline's host
// (the traces and logs pipelines share one exporter, each with its own
// component instance) when it changes.
type statusReporter struct {
	mu    sync.Mutex
	hosts []component.Host
	last  string // the last status and error reported; "" before the first
	final bool   // a permanent error was reported: the collector allows nothing after it but stopping
}

func (r *statusReporter) addHost(h component.Host) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = append(r.hosts, h)
}

// projectStatus is the exporter's status from its projects' health:
//
//   - OK while every project's Sentry answers;
//   - a recoverable error naming the projects whose Sentry gave no answer,
//     or only 5xx, for longer than unreachableAfter, or refused their key
//     (401, 403) while other projects still deliver: one bad project among
//     many degrades the gateway, it does not fail it;
//   - a permanent error when every project's key is refused and no other
//     project can come (no discovery): nothing can be delivered until the
//     DSN is replaced, which is a configuration change.
//
// Errors name projects by id, never by key.
func projectStatus(health []projectHealth, discovery bool) *componentstatus.Event {
	var refused, unreachable []string
	for _, h := range health {
		switch h.State {
		case send.HealthRefused:
			refused = append(refused, fmt.Sprintf("project %s refused its key (HTTP %d): the DSN's key was revoked or the project deleted", h.id, h.Status))
		case send.HealthUnreachable:
			unreachable = append(unreachable, fmt.Sprintf("project %s: no answer or only 5xx from Sentry since %s", h.id, h.Since.UTC().Format(time.RFC3339)))
		}
	}
	switch {
	case len(refused) > 0 && len(refused) == len(health) && !discovery:
		return componentstatus.NewPermanentErrorEvent(errors.New(strings.Join(refused, "; ")))
	case len(refused)+len(unreachable) > 0:
		return componentstatus.NewRecoverableErrorEvent(errors.New(strings.Join(append(refused, unreachable...), "; ")))
	default:
		return componentstatus.NewEvent(componentstatus.StatusOK)
	}
}

// projectHealth is one project's health, by project id.
type projectHealth struct {
	id string
	send.Health
}

// reportStatus reports the projects' health when it changed.
func (e *sentryExporter) reportStatus() {
	now := time.Now()
	var health []projectHealth
	for _, p := range e.allProjects() {
		health = append(health, projectHealth{p.dsn.ProjectID, p.lane.Health(now, unreachableAfter)})
	}
	ev := projectStatus(health, e.cfg.Routing.Discovery.HasValue())
	key := ev.Status().String()
	if err := ev.Err(); err != nil {
		key += ": " + err.Error()
	}
	r := &e.status
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.final || key == r.last {
		return
	}
	if r.last == "" && ev.Status() == componentstatus.StatusOK {
		r.last = key // the collector reports OK once started
		return
	}
	r.last = key
	r.final = ev.Status() == componentstatus.StatusPermanentError
	for _, h := range r.hosts {
		componentstatus.ReportStatus(h, ev)
	}
}
