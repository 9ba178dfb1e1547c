#!/usr/bin/env bash
# usage: cost-summarize.sh BINARY PROFILE
bin=$1 f=$2
echo "== $(basename "$f")"
go tool pprof -top -cum -nodecount=3000 "$bin" "$f" 2>/dev/null | awk '
/Total samples/ {print "  " $0}
{name=$6; cum=$5}
name ~ /otlpreceiver\.handle(Traces|Logs)$/ {r["a receiver: otlpreceiver.handleTraces/Logs"]=cum}
name ~ /(ptraceotlp|plogotlp)\.ExportRequest\.UnmarshalProto$/ {r["b   of which pdata protobuf unmarshal"]=cum}
name ~ /sentryexporter\.\(\*sentryExporter\)\.push(Traces|Logs)$/ {r["c exporter push (translate + envelopes + send)"]=cum}
name ~ /translate\.\(\*Translator\)\.(Traces|Logs)$/ {r["c1  translate (pdata -> Sentry JSON)"]=cum}
name ~ /sentryexporter\.\(\*sender\)\.send$/ {r["d send path (sender.send)"]=cum}
name ~ /compressRoundTripper\)\.RoundTrip$/ {r["e   compression: confighttp gzip round tripper"]=cum}
name ~ /sentryexporter\.\(\*compressors\)\.compress$/ {r["e   compression: compress.go"]=cum}
name ~ /net\/http\.\(\*Client\)\.Do$/ {r["f   net/http Client.Do"]=cum}
name ~ /otelhttp\.\(\*Transport\)\.RoundTrip$/ {r["g   otelhttp client wrapper (incl. transport)"]=cum}
name ~ /net\/http\.\(\*Transport\)\.RoundTrip$/ {r["g2  net/http Transport.RoundTrip"]=cum}
name ~ /persistConn\)\.readLoop$/ {r["h net/http persistConn.readLoop"]=cum}
name ~ /persistConn\)\.writeLoop$/ {r["i net/http persistConn.writeLoop"]=cum}
name ~ /envelope\.\(\*Envelope\)\.AppendTo$/ {r["j envelope encoding (AppendTo)"]=cum}
name ~ /runtime\.gcBgMarkWorker$/ {r["k GC mark workers"]=cum}
name ~ /otlphttpexporter.*push(Traces|Logs)$/ {r["l otlphttp push"]=cum}
name ~ /(ptraceotlp|plogotlp)\.ExportRequest\.MarshalProto$/ {r["m   protobuf marshal"]=cum}
END {for (k in r) printf "  %-52s %s\n", k, r[k]}' | sort
