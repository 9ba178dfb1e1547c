// Package deploy holds no code: its tests check what deploy/ ships against the
// rest of the repository, in a module of its own so that k8s.io/api, kustomize
// and Prometheus never enter the exporter's go.mod.
//
//   - manifests_test.go: every manifest in kubernetes/ decodes strictly into the
//     k8s.io/api types (an unknown or misspelt field fails), the kustomization
//     renders (kustomize's own library, what `kubectl apply -k` runs), the
//     collector configuration passes the built collector's `validate`, and the
//     probe port, the memory figures, the Service names and the Secret agree
//     with that configuration, testdata/scale-out.yaml and the README.
//   - rules_test.go: the alert rules and the Grafana dashboard: every PromQL
//     query parses, names only metrics that metadata.yaml declares (or
//     exporterhelper's, from a list) with labels they carry, each rule has a
//     runbook, and `promtool test rules` shows each fires and stays quiet.
//
// bin/otelcol-sentry (make otelcol) and promtool (Debian's prometheus package)
// are needed by some tests, which skip without them unless DEPLOY_REQUIRED=1
// (CI) makes them fail instead.
package deploy
