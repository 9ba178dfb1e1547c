# perfstages.awk: the collector's CPU samples of one `perf record -g` run, by stage of the
# pipeline. Input: `perf script -F comm,tid,time,ip,sym` (one header line per sample, its
# frames indented below it, leaf first, a blank line after). Each sample goes to the stage of
# the frame nearest its leaf that names one (the zstd encoder called by the send stage counts
# as compression; net/http's round trip under otelhttp's as net/http), so the shares add up
# to 100 %. Runtime and kernel frames name no stage: a malloc is charged to its caller's
# stage. Only samples with no stage frame at all go to the runtime's own rows (background GC,
# sysmon, the scheduler and its idle threads).
# Variables: comm (the process name to keep, default otelcol-compare), per (µs of CPU per
# unit, e.g. per trace; 0: print shares only), unit (the unit's name, for the header).
#
#   perf script -i FILE -F comm,tid,time,ip,sym | awk -f scripts/perfstages.awk -v per=112 -v unit=trace
BEGIN {
	if (comm == "") comm = "otelcol-compare"
	n = 0
	# stage name, and the pattern a frame of it matches
	add("receiver: OTLP/HTTP server, decoding", "otlpreceiver|ptraceotlp|plogotlp|pmetricotlp|net/http\\.\\(\\*conn\\)\\.serve|net/http\\.\\(\\*connReader\\)|net/http\\.\\(\\*response\\)|net/http\\.serverHandler|otelhttp\\.\\(\\*middleware\\)|otelhttp\\.NewMiddleware|otelhttp/internal/semconv\\.HTTPServer|confighttp\\.\\(\\*decompressor\\)|confighttp.*[Hh]andler")
	add("translate (pdata to Sentry JSON)", "sentryexporter/internal/translate|sentryexporter/internal/errorshape|sentryexporter/internal/traceindex|sentryexporter/internal/stacktrace")
	add("compress (zstd, gzip)", "klauspost/compress|compress/flate|compress/gzip")
	add("encode (envelopes, detach)", "sentryexporter/internal/encode|sentryexporter/envelope")
	add("otelhttp client instrumentation", "otelhttp")
	add("confighttp client wrappers (headers, auth, compression)", "confighttp")
	add("net/http client: readLoop", "persistConn\\)\\.readLoop")
	add("net/http client: writeLoop", "persistConn\\)\\.writeLoop")
	add("HTTP/2 client", "http2")
	add("TLS", "crypto/tls|crypto/internal|crypto/aes|crypto/cipher|vendor/golang.org/x/crypto")
	add("net/http client: round trip in the worker", "net/http\\.\\(\\*Client\\)|net/http\\.\\(\\*Transport\\)|net/http\\.\\(\\*persistConn\\)\\.roundTrip|net/http\\.send$|net/http\\.\\(\\*cancelTimerBody\\)|net/http\\.\\(\\*bodyEOFSignal\\)")
	add("rate-limit headers", "sentryexporter/ratelimit")
	add("accounting and metrics", "sentryexporter/internal/account|go.opentelemetry.io/otel/sdk/metric")
	add("answer reading", "send\\.\\(\\*bodyCutter\\)|send\\.\\(\\*poster\\)\\.classify")
	add("send: Offer, hand-over, workers, limits", "sentryexporter/internal/send|sentryexporter/internal/admit")
	add("exporterhelper queue, exporter's push", "exporterhelper|queuebatch|sentryexporter\\.|otlphttpexporter|consumer")
	stages = n
	# the runtime's own rows: only for samples without a stage frame
	add("runtime: GC (background mark, sweep, scavenge)", "runtime\\.gcBgMarkWorker|runtime\\.bgsweep|runtime\\.bgscavenge|runtime\\.gcStart|runtime\\.forEachP|runtime\\.gcMarkDone")
	add("runtime: sysmon", "runtime\\.sysmon")
	add("runtime: scheduler, idle threads, netpoll, timers", "runtime\\.schedule|runtime\\.findRunnable|runtime\\.park_m|runtime\\.mcall|runtime\\.goexit0|runtime\\.stopm|runtime\\.notesleep|runtime\\.netpoll|runtime\\.mstart|runtime\\.gopark|runtime\\.goready|runtime\\.wakep")
	add("runtime: other (malloc, stacks)", "runtime\\.")
	nf = 0
}
function add(name, re) { n++; names[n] = name; res[n] = re }
function flush(   i, j) {
	if (keep && nf > 0) {
		total++
		for (j = 1; j <= nf; j++) {
			for (i = 1; i <= stages; i++) {
				if (fr[j] ~ res[i]) { count[i]++; nf = 0; return }
			}
		}
		for (i = stages + 1; i <= n; i++) {
			for (j = 1; j <= nf; j++) {
				if (fr[j] ~ res[i]) { count[i]++; nf = 0; return }
			}
		}
		other++
	}
	nf = 0
}
/^[^ \t]/ {
	flush()
	keep = ($1 == comm)
	next
}
/^[ \t]*$/ { flush(); next }
{
	# "<addr> <symbol>+<offset> (<dso>)" or "<addr> <symbol>"
	fr[++nf] = $2
}
END {
	flush()
	if (total == 0) { print "no samples of " comm; exit 1 }
	if (per > 0) printf "%-50s %7s %10s\n", "stage", "share", "µs/" unit
	else printf "%-50s %7s\n", "stage", "share"
	for (i = 1; i <= n + 1; i++) {
		c = (i <= n) ? count[i] : other
		name = (i <= n) ? names[i] : "other"
		if (c == 0) continue
		if (per > 0) printf "%-50s %6.1f%% %10.2f\n", name, 100 * c / total, per * c / total
		else printf "%-50s %6.1f%%\n", name, 100 * c / total
	}
	if (per > 0) printf "%-50s %6.1f%% %10.2f\n", "total (" total " samples)", 100, per
	else printf "%-50s %6.1f%%\n", "total (" total " samples)", 100
}
