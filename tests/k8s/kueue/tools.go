//go:build tools

// Package tools pins the real Kueue controller binary so that
// `go build sigs.k8s.io/kueue/cmd/kueue` resolves from this module.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
