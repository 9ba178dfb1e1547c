package send

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otel-sentry/sentryexporter/envelope"
	"github.com/otel-sentry/sentryexporter/internal/account"
)

// TestRetiredLaneLeavesOnceSettled: a retired lane stays while an envelope
// of its waits to retry, and sends it; once it holds nothing, Prune takes
// it out of the stage, its pending client report gets its final attempt,
// and an envelope offered to it after that is counted, never lost. The
// other lane is untouched.
func TestRetiredLaneLeavesOnceSettled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 2, nil, true)
		f.sentry.respond = inTurn([]answer{{status: 503}})
		gone, kept := f.lanes[0], f.lanes[1]
		gone.Offer(t.Context(), txs(1, 1), nil)
		synctest.Wait()
		gone.Retire()
		assert.False(t, gone.Idle(), "its envelope waits to retry")
		assert.Zero(t, f.stage.Prune(t.Context()), "a retired lane holding an envelope stays")
		gone.Offer(t.Context(), txs(2, 1), nil) // offered late: sent like any other
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.True(t, gone.Idle())

		gone.acct.Dropped(t.Context(), account.ReasonQueueOverflow, account.Counts{account.CatSpan: 7})
		before := len(f.sentry.got())
		assert.Equal(t, 1, f.stage.Prune(t.Context()))
		assert.Equal(t, []*Lane{kept}, f.stage.Lanes())
		got := f.sentry.got()[before:]
		require.Len(t, got, 1, "the final client report")
		assert.Equal(t, envelope.ItemTypeClientReport, got[0].env.Items[0].Type)
		assert.Contains(t, string(got[0].env.Items[0].Payload), `"quantity":7`)

		gone.Offer(t.Context(), txs(3, 1), nil)
		kept.Offer(t.Context(), txs(4, 1), nil)
		synctest.Wait()
		assert.Zero(t, f.stage.Prune(t.Context()), "a lane not retired stays")
		f.shutdown()
		sent, dropped := f.sums("sent_items"), f.sums("dropped_items")
		assert.Equal(t, int64(2), sent["category=transaction,project=1"], "both sent, the late one included")
		assert.Equal(t, int64(1), dropped["category=transaction,project=1,reason=network_error"], "offered after it left: counted")
		assert.Equal(t, int64(1), sent["category=transaction,project=2"])
	})
}
