package sentryexporter

import (
	"context"
	"fmt"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// fromTenant is ctx as the receiver leaves it with include_metadata, for a
// request whose x-tenant header is tenant.
func fromTenant(ctx context.Context, tenant string) context.Context {
	return client.NewContext(ctx, client.Info{Metadata: client.NewMetadata(map[string][]string{"x-tenant": {tenant}})})
}

// subject is an auth extension's data: its "subject" attribute.
type subject string

func (s subject) GetAttribute(name string) any {
	if name == "subject" {
		return string(s)
	}
	return nil
}
func (subject) GetAttributeNames() []string { return []string{"subject"} }

// A sender bound to its projects writes only there: a tenant spoofing
// another's service.name reaches nothing of the other's project (those
// items are counted not_allowed), its own resources still go to its own
// project, and a request that names no sender, or one not listed, reaches
// no project at all. The binding is read from the request's client
// metadata (the receiver's include_metadata) or from the auth extension's
// subject.
func TestSenderBoundToItsProjects(t *testing.T) {
	for _, tt := range []struct {
		name   string
		bind   func(*SenderConfig)
		sentBy func(context.Context, string) context.Context
	}{
		{"metadata", func(s *SenderConfig) { s.MetadataKey = "x-tenant" }, fromTenant},
		{"auth subject", func(s *SenderConfig) { s.AuthAttribute = "subject" }, func(ctx context.Context, who string) context.Context {
			return client.NewContext(ctx, client.Info{Auth: subject(who)})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sentry := newMemSentry(t)
				h := newHarnessWith(t, sentry, func(c *Config) {
					c.DSN = ""
					c.Routing.DSNs = map[string]configopaque.String{
						"payments": configopaque.String(sentry.dsnFor("2")),
						"search":   configopaque.String(sentry.dsnFor("3")),
					}
					tt.bind(&c.Routing.Sender)
					c.Routing.Sender.Projects = map[string][]string{"team-pay": {"payments"}, "team-search": {"search"}}
				})
				// team-search sends its own service and one named as payments'.
				td, ld := gatewayBatch("search", "payments")
				require.NoError(t, h.traces.ConsumeTraces(tt.sentBy(t.Context(), "team-search"), td))
				require.NoError(t, h.logs.ConsumeLogs(tt.sentBy(t.Context(), "team-search"), ld))
				// No sender, and a sender not listed: nothing reaches any project.
				td, _ = gatewayBatch("payments")
				require.NoError(t, h.traces.ConsumeTraces(t.Context(), td))
				td, _ = gatewayBatch("payments")
				require.NoError(t, h.traces.ConsumeTraces(tt.sentBy(t.Context(), "team-other"), td))
				// team-pay reaches payments.
				td, _ = gatewayBatch("payments")
				require.NoError(t, h.traces.ConsumeTraces(tt.sentBy(t.Context(), "team-pay"), td))
				h.shutdown()
				sentry.requireNoInvalid()

				got := byProject(sentry)
				assert.Equal(t, map[string]int{"transaction": 2, "event": 2, "log": 4}, got["3"], "search: its own sender's data")
				assert.Equal(t, map[string]int{"transaction": 2, "event": 2}, got["2"], "payments: only team-pay's")
				assert.Len(t, got, 2)
				notAllowed := map[string]string{"project": "unroutable", "reason": "not_allowed"}
				for cat, n := range map[string]int64{"span": 3 * 6, "error": 3 * 2, "log_item": 4} {
					notAllowed["category"] = cat
					assert.Equal(t, n, h.sum("otelcol_exporter_sentry_dropped_items", notAllowed), cat)
				}
			})
		})
	}
}

// Without an allow-list, the sender's name is the routing value: whatever
// service.name its resources carry, they go to the sender's project.
func TestSenderNameIsTheRoutingValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.Routing.DSNs = map[string]configopaque.String{
				"team-pay":    configopaque.String(sentry.dsnFor("2")),
				"team-search": configopaque.String(sentry.dsnFor("3")),
			}
			c.Routing.Sender.MetadataKey = "x-tenant"
		})
		td, _ := gatewayBatch("team-pay", "payments")
		require.NoError(t, h.traces.ConsumeTraces(fromTenant(t.Context(), "team-search"), td))
		h.shutdown()
		assert.Equal(t, map[string]map[string]int{"3": {"transaction": 4, "event": 4}}, byProject(sentry), "everything to the sender's own project")
	})
}

// The sender's name must reach the push: a metadata key through the
// batcher (which keeps only the keys it partitions by), an auth attribute
// through neither the batcher nor a persistent queue.
// senderQueueCase is a configuration of routing::sender and the sending
// queue, and the error it must give ("" for none).
type senderQueueCase struct {
	name    string
	set     func(*Config)
	wantErr string
}

func TestConfigSenderSurvivesTheQueue(t *testing.T) {
	for _, tt := range senderQueueCases() {
		t.Run(tt.name, func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			cfg.DSN = "https://key@o1.ingest.sentry.io/1"
			tt.set(cfg)
			err := cfg.Validate()
			if serr := cfg.Routing.Sender.Validate(); serr != nil {
				err = serr
			}
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func senderQueueCases() []senderQueueCase {
	storage := component.MustNewID("file_storage")
	return []senderQueueCase{
		{
			"metadata key, batches not partitioned", func(c *Config) { c.Routing.Sender.MetadataKey = "x-tenant" },
			"`routing::sender::metadata_key` (x-tenant) must be in `sending_queue::batch::partition::metadata_keys`",
		},
		{"metadata key, batches partitioned by it", func(c *Config) {
			c.Routing.Sender.MetadataKey = "x-tenant"
			c.QueueConfig.Get().Batch.Get().Partition.MetadataKeys = []string{"X-Tenant"}
		}, ""},
		{"metadata key, persistent queue", func(c *Config) {
			c.Routing.Sender.MetadataKey = "x-tenant"
			c.QueueConfig.Get().Batch = configoptional.None[exporterhelper.BatchConfig]()
			c.QueueConfig.Get().StorageID = &storage
			c.Assembly.Wait, c.ErrorEvents.DedupeWindow = 0, 0 // a persistent queue's terms (docs/durability.md)
		}, ""},
		{
			"auth attribute, batched", func(c *Config) { c.Routing.Sender.AuthAttribute = "subject" },
			"`routing::sender::auth_attribute` does not survive `sending_queue::batch` or `sending_queue::storage`",
		},
		{"auth attribute, persistent queue", func(c *Config) {
			c.Routing.Sender.AuthAttribute = "subject"
			c.QueueConfig.Get().Batch = configoptional.None[exporterhelper.BatchConfig]()
			c.QueueConfig.Get().StorageID = &storage
		}, "`routing::sender::auth_attribute` does not survive"},
		{"auth attribute, no batch, memory queue", func(c *Config) {
			c.Routing.Sender.AuthAttribute = "subject"
			c.QueueConfig.Get().Batch = configoptional.None[exporterhelper.BatchConfig]()
		}, ""},
		{"both keys", func(c *Config) {
			c.Routing.Sender.MetadataKey, c.Routing.Sender.AuthAttribute = "x-tenant", "subject"
			c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		}, "set one of `metadata_key` and `auth_attribute`, not both"},
		{
			"projects, no key", func(c *Config) { c.Routing.Sender.Projects = map[string][]string{"team": {"a"}} },
			"`projects` needs `metadata_key` or `auth_attribute`",
		},
		{"an empty list", func(c *Config) {
			c.Routing.Sender.MetadataKey = "x-tenant"
			c.Routing.Sender.Projects = map[string][]string{"team": {}}
			c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		}, "`projects::team` is empty"},
	}
}

// The binding survives the sending queue's batcher: partitioned by the
// sender's metadata key (which config validation requires), requests of two
// senders are batched apart, each batch keeps its sender's key, and the
// spoofer's resources still reach nothing of the other's project.
func TestSenderSurvivesBatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.Routing.DSNs = map[string]configopaque.String{
				"payments": configopaque.String(sentry.dsnFor("2")),
				"search":   configopaque.String(sentry.dsnFor("3")),
			}
			c.Routing.Sender.MetadataKey = "x-tenant"
			c.Routing.Sender.Projects = map[string][]string{"team-pay": {"payments"}, "team-search": {"search"}}
			q := exporterhelper.NewDefaultQueueConfig()
			q.Sizer = exporterhelper.RequestSizerTypeItems
			b := exporterhelper.NewDefaultBatchConfig()
			b.Sizer, b.MinSize = exporterhelper.RequestSizerTypeItems, 1_000
			b.Partition.MetadataKeys = []string{"x-tenant"}
			q.Batch = configoptional.Some(b)
			c.QueueConfig = configoptional.Some(q)
			require.NoError(t, c.senderSurvivesQueue())
		})
		for range 3 {
			td, _ := gatewayBatch("payments")
			require.NoError(t, h.traces.ConsumeTraces(fromTenant(t.Context(), "team-pay"), td))
			td, _ = gatewayBatch("search", "payments")
			require.NoError(t, h.traces.ConsumeTraces(fromTenant(t.Context(), "team-search"), td))
		}
		time.Sleep(time.Second) // the batcher's flush_timeout (virtual time)
		h.shutdown()
		got := byProject(sentry)
		assert.Equal(t, map[string]int{"transaction": 6, "event": 6}, got["2"], "payments: team-pay's only")
		assert.Equal(t, map[string]int{"transaction": 6, "event": 6}, got["3"], "search: team-search's own")
		assert.EqualValues(t, 3*6, h.sum("otelcol_exporter_sentry_dropped_items",
			map[string]string{"project": "unroutable", "category": "span", "reason": "not_allowed"}))
	})
}

// fromAddress is ctx as the receiver leaves it for a request from ip.
func fromAddress(ctx context.Context, ip string) context.Context {
	return client.NewContext(ctx, client.Info{Addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}})
}

// An unbound gateway charges discovery's look-ups to the client's address:
// a sender inventing names spends its own lookups_per_minute, is refused
// beyond it (counted unroutable, no API call), and another sender's new
// service is still looked up and routed. Requests that reach the exporter
// without an address share one budget.
func TestUnboundLookupBudgetPerAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sentry := newMemSentry(t)
		mgmt := newFakeManagement(t, sentry, func() int64 { return 0 })
		h := newHarnessWith(t, sentry, func(c *Config) {
			c.DSN = ""
			c.Routing.Discovery = configoptional.Some(DiscoveryConfig{
				URL: mgmt.url, OrgSlug: "my-org", AuthToken: "sntrys_token", CacheTTL: defaultDiscoveryTTL, LookupsPerMinute: 5,
			})
		})
		invented := make([]string, 20)
		for i := range invented {
			invented[i] = fmt.Sprintf("invented-%d", i)
		}
		td, _ := gatewayBatch(invented...)
		require.NoError(t, h.traces.ConsumeTraces(fromAddress(t.Context(), "10.0.0.66"), td))
		assert.Equal(t, 5, mgmt.calls, "the inventing sender's own budget, then nothing reaches the API")

		td, _ = gatewayBatch("payments")
		require.NoError(t, h.traces.ConsumeTraces(fromAddress(t.Context(), "10.0.0.7"), td))
		assert.Equal(t, 6, mgmt.calls, "another sender's new service is looked up")
		assert.EqualValues(t, 6, h.sum("otelcol_exporter_sentry_sent_items", map[string]string{"project": "2", "category": "span"}))

		for i := range invented {
			invented[i] = fmt.Sprintf("unaddressed-%d", i)
		}
		td, _ = gatewayBatch(invented[:8]...)
		require.NoError(t, h.traces.ConsumeTraces(t.Context(), td)) // no address: the shared budget
		assert.Equal(t, 6+5, mgmt.calls)
		h.shutdown()
		assert.EqualValues(t, (20+8)*6, h.dropped("span", "unroutable"), "every invented name's spans counted")
	})
}
