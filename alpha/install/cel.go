package install

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
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

// compileCEL compiles a rule as OLM does: it must parse, check and have
// type bool.
func compileCEL(rule string) (cel.Program, error) {
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
	return env.Program(ast)
}

// evalCEL evaluates a compiled rule over a bundle's properties: true only
// when the rule evaluates to true.
func evalCEL(p cel.Program, props []any) bool {
	out, _, err := p.Eval(map[string]any{propertiesVar: props})
	if err != nil {
		return false
	}
	b, ok := out.Value().(bool)
	return ok && b
}

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
