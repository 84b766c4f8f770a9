package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// The CEL environment of olm.constraint's cel rules, as OLM defines it
// (operator-framework/api, pkg/constraints, cel.go): one variable,
// properties, a list of {type, value} maps (the candidate bundle's
// properties, values decoded from JSON), and one function,
// semver_compare(a, b), which compares two versions as blang/semver's
// Compare does after reading each tolerantly (a leading "v", missing
// minor or patch). A rule must have type bool; one that fails while it
// is evaluated matches nothing.

// propertiesVar is the name of the variable that holds the properties.
const propertiesVar = "properties"

var (
	celOnce sync.Once
	celEnv  *cel.Env
	celErr  error
)

// environment returns the CEL environment, built once per process.
func environment() (*cel.Env, error) {
	celOnce.Do(func() {
		celEnv, celErr = cel.NewEnv(
			cel.Variable(propertiesVar, cel.ListType(cel.MapType(cel.StringType, cel.AnyType))),
			cel.Function("semver_compare",
				cel.Overload("semver_compare", []*cel.Type{cel.AnyType, cel.AnyType}, cel.IntType,
					cel.BinaryBinding(semverCompare))),
		)
	})
	return celEnv, celErr
}

// semverCompare is semver_compare.
func semverCompare(a, b ref.Val) ref.Val {
	v1, err := semver.ParseTolerant(fmt.Sprint(a.Value()))
	if err != nil {
		return types.ValOrErr(a, "unable to parse '%v' to semver format", a.Value())
	}
	v2, err := semver.ParseTolerant(fmt.Sprint(b.Value()))
	if err != nil {
		return types.ValOrErr(b, "unable to parse '%v' to semver format", b.Value())
	}
	return types.Int(v1.Compare(v2))
}

// CELCostLimit bounds the cost of one evaluation of a rule over one
// bundle, in cel-go's units (about one per operation, one per element a
// comprehension visits): Kubernetes' limit for one CRD validation rule
// (PerCallLimit). OLM sets none (operator-framework/api v0.45.0 compiles
// rules in a plain cel.NewEnv and evaluates them with Program.Eval): a rule
// that iterates the properties three times over runs for minutes there.
// Real rules cost a few hundred at most. An evaluation past the limit
// leaves the question undecided.
const CELCostLimit = 1_000_000

// celInterruptEvery is how many comprehension iterations pass between two
// checks of the question's context.
const celInterruptEvery = 100

// compileCEL compiles a rule as OLM does: it must parse, check and have
// type bool. The program stops past CELCostLimit and when the context of
// its evaluation is done.
func compileCEL(rule string, costLimit uint64) (cel.Program, error) {
	env, err := environment()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(rule)
	if err := iss.Err(); err != nil {
		return nil, err
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("cel expressions must have type Bool")
	}
	return env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(celInterruptEvery))
}

// errCELCost is an evaluation stopped at its cost limit.
var errCELCost = errors.New("its evaluation costs more than the limit")

// evalCEL evaluates a compiled rule over a bundle's properties: true only
// when the rule evaluates to true; an evaluation that fails matches
// nothing, as in OLM. The error is for an evaluation that did not finish:
// errCELCost, or ctx's error.
func evalCEL(ctx context.Context, p cel.Program, props []any) (bool, error) {
	out, _, err := p.ContextEval(ctx, map[string]any{propertiesVar: props})
	if err != nil {
		var cancelled interpreter.EvalCancelledError
		switch {
		case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
			return false, errCELCost
		case ctx.Err() != nil:
			return false, ctx.Err()
		}
		return false, nil
	}
	b, ok := out.Value().(bool)
	return ok && b, nil
}

// celError is a question left undecided by a CEL rule: past its cost
// limit on a bundle, or stopped by the question's context.
type celError struct {
	rule   string
	bundle *Entry
	err    error
	limit  uint64
}

func (e *celError) Error() string {
	if errors.Is(e.err, errCELCost) {
		return fmt.Sprintf("the CEL rule %q on bundle %s: %v of %d", e.rule, e.bundle.Name(), e.err, e.limit)
	}
	return fmt.Sprintf("the CEL rule %q on bundle %s: %v", e.rule, e.bundle.Name(), e.err)
}

func (e *celError) Unwrap() error { return e.err }

// celProperties is the value of the properties variable for a bundle: one
// {type, value} map per property, in order, the value decoded from JSON
// (numbers as float64). A value that does not decode leaves a nil map in
// its place, as in OLM.
func celProperties(props []Property) []any {
	out := make([]any, len(props))
	for i, p := range props {
		var v any
		if err := json.Unmarshal(p.Value, &v); err != nil {
			out[i] = map[string]any(nil)
			continue
		}
		out[i] = map[string]any{"type": p.Type, "value": v}
	}
	return out
}
