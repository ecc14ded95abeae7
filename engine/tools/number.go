package tools

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// num is a number operand with Python's int/float split: a JSON literal
// without '.', 'e' or 'E' is an int (exact, arbitrary size), anything else
// is a float64. Booleans are the ints 0 and 1.
type num struct {
	float bool
	small int64    // int value when !float and big == nil
	big   *big.Int // int value when it does not fit in int64
	f     float64  // value when float
}

func intNum(i int64) num { return num{small: i} }

func floatNum(f float64) num { return num{float: true, f: f} }

// bigNum returns b as a num, narrowing it to int64 when it fits.
func bigNum(b *big.Int) num {
	if b.IsInt64() {
		return num{small: b.Int64()}
	}
	return num{big: b}
}

// toNum converts a decoded JSON value to a number operand. ok is false for
// anything that is not a number or a boolean.
func toNum(v any) (num, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseNumber(string(x))
	case bool:
		if x {
			return intNum(1), true
		}
		return intNum(0), true
	case float64:
		return floatNum(x), true
	case int:
		return intNum(int64(x)), true
	case int64:
		return intNum(x), true
	}
	return num{}, false
}

func parseNumber(s string) (num, bool) {
	if i, ok := smallInt(s); ok {
		return intNum(i), true
	}
	if !strings.ContainsAny(s, ".eE") {
		if s == "" || s[0] == '+' {
			return num{}, false
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return intNum(i), true
		}
		if !validJSONInt(s) {
			return num{}, false
		}
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return num{}, false
		}
		return bigNum(b), true
	}
	if !validJSONFloat(s) {
		return num{}, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return num{}, false
	}
	// Out-of-range literals become ±Inf or 0, as Python's float() does.
	return floatNum(f), true
}

// smallInt parses the common case, an integer literal of at most 18
// digits, without the general parsers.
func smallInt(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if neg {
		n = -n
	}
	return n, true
}

// validJSONInt reports whether s is a JSON integer literal. big.Int accepts
// more ("+5", "0x1f", underscores), which a JSON number never holds.
func validJSONInt(s string) bool {
	if strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validJSONFloat rejects what ParseFloat takes but JSON does not: "inf",
// "NaN", hex floats, underscores and a leading '+'.
func validJSONFloat(s string) bool {
	for _, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '-', c == '+':
		default:
			return false
		}
	}
	return s != "" && s[0] != '+'
}

// bigInt returns the int value of n as a *big.Int (n must be an int).
func (n num) bigInt() *big.Int {
	if n.big != nil {
		return n.big
	}
	return big.NewInt(n.small)
}

// toFloat converts n to float64 the way Python's float(int) does: correctly
// rounded, and an error when the int is too large for a float.
func (n num) toFloat() (float64, error) {
	if n.float {
		return n.f, nil
	}
	if n.big == nil {
		return float64(n.small), nil
	}
	f, _ := new(big.Float).SetInt(n.big).Float64()
	if math.IsInf(f, 0) {
		return 0, errIntTooLarge
	}
	return f, nil
}

var errIntTooLarge = errors.New("int too large to convert to float")

// value renders n as a JSON number, printing floats as Python's repr does.
func (n num) value() (json.Number, error) {
	if !n.float {
		if n.big != nil {
			return json.Number(n.big.String()), nil
		}
		return json.Number(strconv.FormatInt(n.small, 10)), nil
	}
	if math.IsInf(n.f, 0) || math.IsNaN(n.f) {
		return "", errNotFinite
	}
	return json.Number(formatFloat(n.f)), nil
}

var errNotFinite = errors.New("result is not a finite number, which JSON cannot hold")

// formatFloat prints f as Python's repr(float) does: the shortest digits
// that round-trip, in positional notation with at least one fractional digit
// (3.0, 0.0001) unless the decimal exponent is below -4 or above 15, where
// it uses scientific notation with a signed, two-digit-minimum exponent
// (1e+16, 1.5e-05).
func formatFloat(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:])
	if decpt := exp + 1; decpt <= -4 || decpt > 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// arith applies one of + - * to two numbers with Python's rules: int op int
// is an exact int, anything with a float is a float.
func arith(op byte, a, b num) (num, error) {
	if !a.float && !b.float {
		if a.big == nil && b.big == nil {
			if r, ok := smallArith(op, a.small, b.small); ok {
				return intNum(r), nil
			}
		}
		x, y := a.bigInt(), b.bigInt()
		r := new(big.Int)
		switch op {
		case '+':
			r.Add(x, y)
		case '-':
			r.Sub(x, y)
		case '*':
			r.Mul(x, y)
		}
		return bigNum(r), nil
	}
	x, err := a.toFloat()
	if err != nil {
		return num{}, err
	}
	y, err := b.toFloat()
	if err != nil {
		return num{}, err
	}
	switch op {
	case '+':
		return floatNum(x + y), nil
	case '-':
		return floatNum(x - y), nil
	default:
		return floatNum(x * y), nil
	}
}

// smallArith computes a op b in int64, reporting false on overflow.
func smallArith(op byte, a, b int64) (int64, bool) {
	switch op {
	case '+':
		r := a + b
		return r, (r > a) == (b > 0)
	case '-':
		r := a - b
		return r, (r < a) == (b > 0)
	default:
		if a == 0 || b == 0 {
			return 0, true
		}
		r := a * b
		if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return 0, false
		}
		return r, true
	}
}

var errDivisionByZero = errors.New("division by zero")

// trueDiv is Python's a / b: always a float, correctly rounded even for
// ints beyond 2^53.
func trueDiv(a, b num) (num, error) {
	if !a.float && !b.float {
		if b.big == nil && b.small == 0 {
			return num{}, errDivisionByZero
		}
		const exact = 1 << 53
		if a.big == nil && b.big == nil && -exact <= a.small && a.small <= exact && -exact <= b.small && b.small <= exact {
			return floatNum(float64(a.small) / float64(b.small)), nil
		}
		f, _ := new(big.Rat).SetFrac(a.bigInt(), b.bigInt()).Float64()
		if math.IsInf(f, 0) {
			return num{}, errors.New("integer division result too large for a float")
		}
		return floatNum(f), nil
	}
	x, err := a.toFloat()
	if err != nil {
		return num{}, err
	}
	y, err := b.toFloat()
	if err != nil {
		return num{}, err
	}
	if y == 0 {
		return num{}, errDivisionByZero
	}
	return floatNum(x / y), nil
}

// neg is Python's -n.
func neg(n num) num {
	switch {
	case n.float:
		return floatNum(-n.f)
	case n.big != nil:
		return bigNum(new(big.Int).Neg(n.big))
	case n.small == math.MinInt64:
		return bigNum(new(big.Int).Neg(big.NewInt(n.small)))
	}
	return intNum(-n.small)
}

// cmpNum compares two numbers exactly, as Python compares int and float
// (no rounding of the int): -1, 0 or +1. NaN cannot come from JSON.
func cmpNum(a, b num) int {
	switch {
	case !a.float && !b.float:
		if a.big == nil && b.big == nil {
			return cmpInt64(a.small, b.small)
		}
		return a.bigInt().Cmp(b.bigInt())
	case a.float && b.float:
		return cmpFloat(a.f, b.f)
	case a.float:
		return -cmpIntFloat(b, a.f)
	default:
		return cmpIntFloat(a, b.f)
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpIntFloat compares the int i with the float f without rounding i.
func cmpIntFloat(i num, f float64) int {
	if math.IsInf(f, 0) {
		if f > 0 {
			return -1
		}
		return 1
	}
	const exact = 1 << 53
	if i.big == nil && -exact <= i.small && i.small <= exact {
		return cmpFloat(float64(i.small), f)
	}
	x := new(big.Float).SetInt(i.bigInt())
	return x.Cmp(new(big.Float).SetFloat64(f))
}

// integral returns n as an exact int when n's value is integral (a float
// such as 4.0 counts, as JSON Schema's "integer" does).
func integral(n num) (num, bool) {
	if !n.float {
		return n, true
	}
	if math.IsInf(n.f, 0) || math.IsNaN(n.f) || n.f != math.Trunc(n.f) {
		return num{}, false
	}
	if math.Abs(n.f) < 1<<62 {
		return intNum(int64(n.f)), true
	}
	b, _ := new(big.Float).SetFloat64(n.f).Int(nil)
	return bigNum(b), true
}

// odd reports whether the int n is odd.
func (n num) odd() bool {
	if n.big != nil {
		return n.big.Bit(0) == 1
	}
	return n.small&1 == 1
}
