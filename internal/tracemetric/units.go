package tracemetric

// sentryUnit maps an OTLP unit (UCUM, as the semantic conventions write
// them) to Sentry's unit of the same meaning; a unit with no exact match
// ("1", "{request}", custom ones) maps to none. Sentry's units are
// sentry-go's UnitNanosecond ... UnitPercent (metrics.go), which Relay's
// MetricUnit reads (relay-base-schema/src/metrics/units.rs).
var sentryUnit = map[string]string{
	"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second",
	"min": "minute", "h": "hour", "d": "day", "wk": "week",
	"bit": "bit", "By": "byte",
	"kBy": "kilobyte", "KiBy": "kibibyte", "MBy": "megabyte", "MiBy": "mebibyte",
	"GBy": "gigabyte", "GiBy": "gibibyte", "TBy": "terabyte", "TiBy": "tebibyte",
	"PBy": "petabyte", "PiBy": "pebibyte", "EBy": "exabyte", "EiBy": "exbibyte",
	"%": "percent",
}

// unitOf is the Sentry unit of an OTLP unit, or "".
func unitOf(otlp string) string { return sentryUnit[otlp] }
