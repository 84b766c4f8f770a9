//go:build opm_lean

package action

const lean = true
