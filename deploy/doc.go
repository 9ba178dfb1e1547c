// Package deploy holds no code: its tests check what deploy/ ships against the
// rest of the repository, in a module of its own so that k8s.io/api and kustomize
// never enter the exporter's go.mod.
//
//   - manifests_test.go: every manifest in kubernetes/ decodes strictly into the
//     k8s.io/api types (an unknown or misspelt field fails), the kustomization
//     renders (kustomize's own library, what `kubectl apply -k` runs), the
//     collector configuration passes the built collector's `validate`, and the
//     probe port, the memory figures, the Service names and the Secret agree
//     with that configuration, testdata/scale-out.yaml and the README.
//
// bin/otelcol-sentry (make otelcol) is needed by some tests, which skip without
// it unless DEPLOY_REQUIRED=1 (CI) makes them fail instead.
package deploy
