package tools

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/treelang/treelang/engine"
)

// builtin names one builtin computation. The set is closed; apply switches
// on it (a direct call, so the operand slice can stay on the caller's stack).
type builtin uint8

const (
	bAdd builtin = iota + 1
	bSubtract
	bMultiply
	bDivide
	bGreaterThan
	bLessThan
	bEquals
	bIsOdd
	bIsEven
	bNegate
	bConcat
	bLength
	bSum
	bRange
	bIdentity
)

// builtinSpec documents one builtin: its name, its legacy definition for
// Builtins() (property names, in operand order) and how many operands it
// takes (max < 0: no upper bound).
type builtinSpec struct {
	name     string
	props    []string
	min, max int
	desc     string
}

var builtinSpecs = [...]builtinSpec{
	bAdd:         {"add", []string{"a", "b"}, 2, 2, "Return a + b (exact for integers)."},
	bSubtract:    {"subtract", []string{"a", "b"}, 2, 2, "Return a - b (exact for integers)."},
	bMultiply:    {"multiply", []string{"a", "b"}, 2, 2, "Return a * b (exact for integers)."},
	bDivide:      {"divide", []string{"a", "b"}, 2, 2, "Return a / b, Python's true division (always a float)."},
	bGreaterThan: {"greater_than", []string{"a", "b"}, 2, 2, "Return whether a > b (numbers or strings)."},
	bLessThan:    {"less_than", []string{"a", "b"}, 2, 2, "Return whether a < b (numbers or strings)."},
	bEquals:      {"equals", []string{"a", "b"}, 2, 2, "Return whether a == b by Python's rules (1 == 1.0 == true)."},
	bIsOdd:       {"is_odd", []string{"value"}, 1, 1, "Return whether an integer is odd."},
	bIsEven:      {"is_even", []string{"value"}, 1, 1, "Return whether an integer is even."},
	bNegate:      {"negate", []string{"value"}, 1, 1, "Return -value for a number, not value for a boolean."},
	bConcat:      {"concat", []string{"a", "b"}, 1, -1, "Join strings, or arrays, in order."},
	bLength:      {"length", []string{"value"}, 1, 1, "Return the number of characters of a string, items of an array or keys of an object."},
	bSum:         {"sum", []string{"values"}, 1, 1, "Return the sum of an array of numbers."},
	bRange:       {"range", []string{"stop"}, 1, 3, "Return Python's list(range(...)) for 1 to 3 integers: stop | start, stop | start, stop, step."},
	bIdentity:    {"identity", []string{"value"}, 1, -1, "Return the first argument unchanged."},
}

var builtinByName = func() map[string]builtin {
	m := make(map[string]builtin, len(builtinSpecs))
	for i := 1; i < len(builtinSpecs); i++ {
		m[builtinSpecs[i].name] = builtin(i)
	}
	return m
}()

func (b builtin) String() string { return builtinSpecs[b].name }

// maxRangeLength caps range's result, so a stray range(10**12) fails
// instead of exhausting memory.
const maxRangeLength = 10_000_000

// operand is one argument of a builtin: the property it came from (for
// messages) and its value.
type operand struct {
	name  string
	value any
}

// apply runs builtin b for the tool named tool. Errors are
// ToolExecutionErrors whose message starts with the tool's name.
func (b builtin) apply(tool string, ops []operand) (any, error) {
	spec := &builtinSpecs[b]
	if len(ops) < spec.min || (spec.max >= 0 && len(ops) > spec.max) {
		return nil, arityError(tool, spec, len(ops))
	}
	switch b {
	case bIdentity:
		return ops[0].value, nil
	case bAdd:
		return arithOp(tool, '+', ops[0], ops[1])
	case bSubtract:
		return arithOp(tool, '-', ops[0], ops[1])
	case bMultiply:
		return arithOp(tool, '*', ops[0], ops[1])
	case bDivide:
		x, y, err := numOperands(tool, ops[0], ops[1])
		if err != nil {
			return nil, err
		}
		r, err := trueDiv(x, y)
		if err != nil {
			return nil, execError("%s", err)
		}
		return numResult(tool, r)
	case bGreaterThan, bLessThan:
		c, err := compare(tool, ops[0], ops[1])
		if err != nil {
			return nil, err
		}
		if b == bGreaterThan {
			return c > 0, nil
		}
		return c < 0, nil
	case bEquals:
		return pyEqual(ops[0].value, ops[1].value), nil
	case bIsOdd, bIsEven:
		n, err := intOperand(tool, ops[0])
		if err != nil {
			return nil, err
		}
		return n.odd() == (b == bIsOdd), nil
	case bNegate:
		if v, ok := ops[0].value.(bool); ok {
			return !v, nil
		}
		n, ok := toNum(ops[0].value)
		if !ok {
			return nil, operandError(tool, ops[0], "a number or a boolean")
		}
		return numResult(tool, neg(n))
	case bConcat:
		return concat(tool, ops)
	case bLength:
		switch v := ops[0].value.(type) {
		case string:
			return json.Number(strconv.Itoa(utf8.RuneCountInString(v))), nil
		case []any:
			return json.Number(strconv.Itoa(len(v))), nil
		case map[string]any:
			return json.Number(strconv.Itoa(len(v))), nil
		}
		return nil, operandError(tool, ops[0], "a string, an array or an object")
	case bSum:
		return sum(tool, ops[0])
	case bRange:
		return rangeList(tool, ops)
	}
	return nil, execError("%s: unknown builtin", tool)
}

func execError(format string, args ...any) error {
	return engine.Errorf(engine.ToolExecutionError, format, args...)
}

func arityError(tool string, spec *builtinSpec, got int) error {
	return execError("%s: expects %s (builtin %s), got %d", tool, operandCount(spec), spec.name, got)
}

func operandError(tool string, op operand, want string) error {
	return execError("%s: operand '%s' must be %s, got %s", tool, op.name, want, engine.TypeName(op.value))
}

func numOperands(tool string, a, b operand) (num, num, error) {
	x, ok := toNum(a.value)
	if !ok {
		return num{}, num{}, operandError(tool, a, "a number")
	}
	y, ok := toNum(b.value)
	if !ok {
		return num{}, num{}, operandError(tool, b, "a number")
	}
	return x, y, nil
}

func numResult(tool string, n num) (any, error) {
	v, err := n.value()
	if err != nil {
		return nil, execError("%s: %s", tool, err)
	}
	return v, nil
}

func arithOp(tool string, op byte, a, b operand) (any, error) {
	x, y, err := numOperands(tool, a, b)
	if err != nil {
		return nil, err
	}
	r, err := arith(op, x, y)
	if err != nil {
		return nil, execError("%s: %s", tool, err)
	}
	return numResult(tool, r)
}

// intOperand returns op as an int; integral floats such as 4.0 count.
func intOperand(tool string, op operand) (num, error) {
	n, ok := toNum(op.value)
	if !ok {
		return num{}, operandError(tool, op, "an integer")
	}
	i, ok := integral(n)
	if !ok {
		return num{}, execError("%s: operand '%s' must be an integer, got %s", tool, op.name, formatFloat(n.f))
	}
	return i, nil
}

// compare orders two numbers exactly, or two strings by code point.
func compare(tool string, a, b operand) (int, error) {
	if x, ok := a.value.(string); ok {
		if y, ok := b.value.(string); ok {
			return strings.Compare(x, y), nil
		}
	} else if x, ok := toNum(a.value); ok {
		if y, ok := toNum(b.value); ok {
			return cmpNum(x, y), nil
		}
	}
	return 0, execError("%s: operands '%s' and '%s' must be two numbers or two strings, got %s and %s",
		tool, a.name, b.name, engine.TypeName(a.value), engine.TypeName(b.value))
}

// pyEqual is Python's == on decoded JSON: numbers and booleans compare by
// value (1 == 1.0 == true), objects ignore key order.
func pyEqual(a, b any) bool {
	if x, ok := toNum(a); ok {
		y, ok := toNum(b)
		return ok && cmpNum(x, y) == 0
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !pyEqual(xv, yv) {
				return false
			}
		}
		return true
	case json.Number:
		// Not a valid number (toNum failed): compare the text.
		y, ok := b.(json.Number)
		return ok && x == y
	}
	return engine.Equal(a, b)
}

func concat(tool string, ops []operand) (any, error) {
	switch ops[0].value.(type) {
	case string:
		var sb strings.Builder
		for _, op := range ops {
			s, ok := op.value.(string)
			if !ok {
				return nil, operandError(tool, op, "a string like the first")
			}
			sb.WriteString(s)
		}
		return sb.String(), nil
	case []any:
		n := 0
		for _, op := range ops {
			a, ok := op.value.([]any)
			if !ok {
				return nil, operandError(tool, op, "an array like the first")
			}
			n += len(a)
		}
		out := make([]any, 0, n)
		for _, op := range ops {
			out = append(out, op.value.([]any)...)
		}
		return out, nil
	}
	return nil, operandError(tool, ops[0], "a string or an array")
}

// sum is Python's sum(values) with start 0 (CPython 3.12+): ints add
// exactly; once a float appears, floats are added with Neumaier's
// compensated summation, as CPython's float fast path does, and an int too
// large for int64 falls back to plain additions.
func sum(tool string, op operand) (any, error) {
	items, ok := op.value.([]any)
	if !ok {
		return nil, operandError(tool, op, "an array of numbers")
	}
	item := func(i int) (num, error) {
		n, ok := toNum(items[i])
		if !ok {
			return num{}, execError("%s: item %d of '%s' must be a number, got %s", tool, i, op.name, engine.TypeName(items[i]))
		}
		return n, nil
	}
	var acc int64
	i := 0
	for ; i < len(items); i++ {
		n, err := item(i)
		if err != nil {
			return nil, err
		}
		if n.float || n.big != nil {
			break
		}
		r, ok := smallArith('+', acc, n.small)
		if !ok {
			break
		}
		acc = r
	}
	if i == len(items) {
		return json.Number(strconv.FormatInt(acc, 10)), nil
	}
	// The int fast path ended at item i: add it the generic way.
	n, _ := item(i)
	result, err := arith('+', intNum(acc), n)
	if err != nil {
		return nil, execError("%s: %s", tool, err)
	}
	i++
	if result.float {
		f, c := result.f, 0.0
		for ; i < len(items); i++ {
			n, err := item(i)
			if err != nil {
				return nil, err
			}
			if !n.float && n.big != nil {
				break
			}
			x := n.f
			if !n.float {
				x = float64(n.small)
			}
			t := f + x
			if math.Abs(f) >= math.Abs(x) {
				c += (f - t) + x
			} else {
				c += (x - t) + f
			}
			f = t
		}
		if c != 0 && !math.IsInf(c, 0) && !math.IsNaN(c) {
			f += c
		}
		result = floatNum(f)
	}
	for ; i < len(items); i++ {
		n, err := item(i)
		if err != nil {
			return nil, err
		}
		if result, err = arith('+', result, n); err != nil {
			return nil, execError("%s: %s", tool, err)
		}
	}
	return numResult(tool, result)
}

// rangeList is list(range(...)) with 1 to 3 integer operands.
func rangeList(tool string, ops []operand) (any, error) {
	var args [3]int64
	for i, op := range ops {
		n, err := intOperand(tool, op)
		if err != nil {
			return nil, err
		}
		if n.big != nil {
			return nil, execError("%s: operand '%s' is too large for a range", tool, op.name)
		}
		args[i] = n.small
	}
	start, stop, step := int64(0), args[0], int64(1)
	if len(ops) >= 2 {
		start, stop = args[0], args[1]
	}
	if len(ops) == 3 {
		step = args[2]
	}
	if step == 0 {
		return nil, execError("%s: range() arg 3 must not be zero", tool)
	}
	// Count in uint64: stop-start may not fit in int64.
	var count uint64
	if step > 0 && start < stop {
		count = (uint64(stop)-uint64(start)-1)/uint64(step) + 1
	} else if step < 0 && start > stop {
		count = (uint64(start)-uint64(stop)-1)/(uint64(-(step+1))+1) + 1
	}
	if count > maxRangeLength {
		return nil, execError("%s: range would have %d items, more than the limit of %d", tool, count, maxRangeLength)
	}
	// Format every number into one buffer and slice the strings out of it:
	// one allocation for the text instead of one per item.
	buf := make([]byte, 0, int(count)*8)
	ends := make([]int, count)
	v := start
	for i := range ends {
		buf = strconv.AppendInt(buf, v, 10)
		ends[i] = len(buf)
		v += step
	}
	text := string(buf)
	out := make([]any, count)
	prev := 0
	for i, end := range ends {
		out[i] = json.Number(text[prev:end])
		prev = end
	}
	return out, nil
}
