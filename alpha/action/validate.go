package action

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/pkg/schema"
)

// Validate checks a catalog tree: every file parses, every blob meets the
// CUE schema, and the catalog passes upstream opm's model rules. It
// reports every problem in one run.
type Validate struct {
	// FS is the catalog root.
	FS fs.FS
	// Strict turns schema warnings (the CUE schema is stricter than
	// upstream opm) into errors.
	Strict bool
	// SkipSchema skips the CUE schema check.
	SkipSchema bool
	// MaxFileSize is the largest catalog file read, in bytes (0: the
	// loader's default, declcfg.DefaultMaxFileSize; < 0: no limit).
	MaxFileSize int64
}

// ValidationResult is what Validate found.
type ValidationResult struct {
	// Problems, errors and warnings, in output order.
	Problems model.Problems
	// Model is the catalog's graph, complete where the catalog is valid.
	Model model.Model
}

// Passed reports whether the catalog is valid.
func (r *ValidationResult) Passed() bool { return len(r.Problems.Errors()) == 0 }

// Err is the validation error in upstream's format, or nil.
func (r *ValidationResult) Err() error { return r.Problems.Err() }

var (
	checkerOnce sync.Once
	checker     *schema.Checker
	checkerErr  error
)

// schemaChecker compiles the embedded CUE schema once per process.
func schemaChecker() (*schema.Checker, error) {
	checkerOnce.Do(func() { checker, checkerErr = schema.New() })
	return checker, checkerErr
}

// Run validates the catalog. The error is for failures to validate at all
// (a cancelled context, say); an invalid catalog is reported in the result.
func (v Validate) Run(ctx context.Context) (*ValidationResult, error) {
	var chk *schema.Checker
	if !v.SkipSchema {
		var err error
		if chk, err = schemaChecker(); err != nil {
			return nil, fmt.Errorf("compile CUE schema: %w", err)
		}
	}
	bld := model.NewBuilder()
	var (
		mu     sync.Mutex
		extras model.Problems
	)
	sev := model.SeverityWarning
	if v.Strict {
		sev = model.SeverityError
	}
	err := declcfg.Walk(ctx, v.FS, func(b *declcfg.Blob) error {
		if chk != nil {
			if vs := chk.Check(b.Schema, declcfg.NormalizeMetaKeys(b.JSON)); len(vs) > 0 {
				ps := make(model.Problems, 0, len(vs))
				for _, viol := range vs {
					ps = append(ps, schemaProblem(b, viol, sev))
				}
				mu.Lock()
				extras = append(extras, ps...)
				mu.Unlock()
			}
		}
		bld.AddBlob(b)
		return nil
	}, declcfg.WithMaxFileSize(v.MaxFileSize))
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return nil, err
	}
	if len(walkErrs) > 0 {
		bld.MarkIncomplete()
	}
	m, problems := bld.Build()
	var all model.Problems
	for _, e := range walkErrs {
		all = append(all, model.ParseProblem(e))
	}
	all = append(all, problems...)
	all = append(all, sortProblems(extras)...)
	return &ValidationResult{Problems: all, Model: m}, nil
}

// schemaProblem reports a CUE violation at its blob.
func schemaProblem(b *declcfg.Blob, v schema.Violation, sev model.Severity) model.Problem {
	what := b.Schema
	if b.Name != "" {
		what = fmt.Sprintf("%s %q", b.Schema, b.Name)
	}
	field := v.Path
	if field == "" {
		field = "(blob)"
	}
	p := model.Problem{
		Rule:     model.RuleSchema,
		Severity: sev,
		Message:  fmt.Sprintf("%s: %s: %s: %s", b.Pos(), what, field, v.Message),
		Package:  b.Package,
		File:     b.Path,
		Line:     b.Line,
		Column:   b.Col,
	}
	switch b.Schema {
	case declcfg.SchemaPackage:
		p.Package = b.Name
	case declcfg.SchemaChannel:
		p.Channel = b.Name
	case declcfg.SchemaBundle:
		p.Bundle = b.Name
	}
	return model.SchemaProblem(p)
}

func sortProblems(ps model.Problems) model.Problems {
	return model.SortByPosition(ps)
}
