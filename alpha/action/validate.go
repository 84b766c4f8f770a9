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
	// Strict turns warnings (the CUE schema's findings, stricter than
	// upstream opm; files other tools read differently) into errors.
	Strict bool
	// SkipSchema skips the CUE schema check.
	SkipSchema bool
	// MaxFileSize is the largest catalog file read, in bytes (0: the
	// loader's default, declcfg.DefaultMaxFileSize; < 0: no limit).
	MaxFileSize int64
	// Visit, when set, is given every blob too, so that a caller reads
	// what else it needs of the catalog in the same pass. It is called
	// from several goroutines at once; the blob is only valid during the
	// call.
	Visit func(*declcfg.Blob)
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
			blob := declcfg.NormalizeMetaKeys(b.JSON)
			var fs []schema.Finding
			if vs := chk.Check(b.Schema, blob); len(vs) > 0 {
				// Only a blob with findings pays for their words
				// and for the lines of its fields.
				fs = chk.Explain(b.Schema, blob, vs)
			}
			if b.Schema == declcfg.SchemaBundle {
				// The olm.constraint values OLM refuses for its
				// own limits, which upstream does not check.
				fs = append(fs, chk.OLMRefusals(blob)...)
			}
			if len(fs) > 0 {
				ps := make(model.Problems, 0, len(fs))
				for _, f := range fs {
					ps = append(ps, schemaProblem(b, f, sev))
				}
				mu.Lock()
				extras = append(extras, ps...)
				mu.Unlock()
			}
		}
		bld.AddBlob(b)
		if v.Visit != nil {
			v.Visit(b)
		}
		return nil
	}, declcfg.WithMaxFileSize(v.MaxFileSize), declcfg.WithWarnings(func(w *declcfg.Error) {
		mu.Lock()
		defer mu.Unlock()
		extras = append(extras, model.Problem{Rule: model.RuleReadElsewhere, Severity: sev, Message: w.Error(),
			File: w.Path, Line: w.Line, Column: w.Col})
	}))
	var walkErrs declcfg.Errors
	if err != nil && !errors.As(err, &walkErrs) {
		return nil, err
	}
	bld.AddLoadErrors(walkErrs)
	m, problems := bld.Build()
	all := append(problems, sortProblems(extras)...)
	return &ValidationResult{Problems: all, Model: m}, nil
}

// schemaProblem reports a schema finding at its field.
func schemaProblem(b *declcfg.Blob, f schema.Finding, sev model.Severity) model.Problem {
	what := b.Schema
	if b.Name != "" {
		what = fmt.Sprintf("%s %q", b.Schema, b.Name)
	}
	line, col := b.Locate(f.Steps)
	p := model.Problem{
		Rule:     model.RuleSchema,
		Severity: sev,
		Message:  fmt.Sprintf("%s:%d:%d: %s: %s", b.Path, line, col, what, f.Words),
		Package:  b.Package,
		File:     b.Path,
		Line:     line,
		Column:   col,
		Field:    f.Path,
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
