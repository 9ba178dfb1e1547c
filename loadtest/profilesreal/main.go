// Command profilesreal is make profiles-real's real profile source: a real Go program and
// a scraper of its net/http/pprof endpoints that turns what it serves into OTLP profiles,
// as contrib's pprofreceiver does (the Go module proxy serves neither that receiver nor the
// OpenTelemetry eBPF profiler: docs/profiles.md).
//
//	profilesreal app    -listen ADDR
//	profilesreal scrape -app URL -otlp URL -rounds N -seconds S -summary FILE
//
// app serves HTTP handlers that do real work (JSON, SHA-256, regular expressions, sorting)
// and drives them with its own clients, so its CPU is busy in named functions on several
// threads; it exposes /debug/pprof.
//
// scrape, each round, fetches at once the app's CPU profile (/debug/pprof/profile) and its
// execution trace (/debug/pprof/trace) over the same S seconds. While the CPU profiler runs,
// the runtime writes each CPU sample into the trace too, with its time and the thread (M)
// that took it. So each round sends two OTLP profiles of the same process:
//   - the pprof profile as pprofreceiver converts one: aggregated samples (a stack and its
//     count, no timestamps), sample type samples/count;
//   - the trace's CPU samples: one sample per event, its wall-clock timestamp from the
//     trace's clock snapshot, its stack's frames (function, file, line), and thread.id (the
//     M) with thread.name.
//
// The summary counts what was sent and what Sentry can hold of it: the aggregated profiles
// (the exporter counts each one dropped, invalid: docs/mapping.md#profiles), the timestamped
// ones and their samples, and the samples of threads with a single sample in a profile,
// which Relay removes (remove_single_samples_per_thread) and the exporter leaves out.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: profilesreal app|scrape [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "app":
		err = runApp(os.Args[2:])
	case "scrape":
		err = runScrape(os.Args[2:])
	default:
		err = errors.New("unknown command " + os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profilesreal:", err)
		os.Exit(1)
	}
}

// flags parses args into fs, reporting errors instead of exiting.
func flags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	return fs.Parse(args)
}
