package jsonschema

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
)

// dec is an exact view of a decimal number held in a string, parsed without
// allocating. Its value is ±0.D × 10^adj, where D is the run of significant
// digits digit(lo)..digit(hi) of the concatenation ip+fp.
type dec struct {
	neg    bool
	ip, fp string // integer and fraction digits, as written
	lo, hi int    // first and last non-zero digit in ip+fp; lo > hi for zero
	adj    int    // adjusted exponent
}

// expLimit caps decimal exponents so that absurd literals such as 1e999999999999
// cannot overflow; numbers beyond it compare as if they were at the cap.
const expLimit = 1 << 40

func (d *dec) digit(i int) byte {
	if i < len(d.ip) {
		return d.ip[i]
	}
	return d.fp[i-len(d.ip)]
}

func (d *dec) isZero() bool { return d.lo > d.hi }

// sig is the number of significant digits.
func (d *dec) sig() int {
	if d.isZero() {
		return 0
	}
	return d.hi - d.lo + 1
}

// isInteger reports whether the value is integral (2e3 and 1.0 are).
func (d *dec) isInteger() bool { return d.isZero() || d.sig() <= d.adj }

// parseDec parses a JSON number (an optional leading '+' is tolerated).
func parseDec(s string) (dec, bool) {
	var d dec
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		d.neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	d.ip = s[start:i]
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		d.fp = s[fs:i]
		if d.fp == "" {
			return d, false
		}
	}
	if d.ip == "" {
		return d, false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			if exp < expLimit {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == es {
			return d, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	n := len(d.ip) + len(d.fp)
	d.lo, d.hi = n, -1
	for k := 0; k < n; k++ {
		if d.digit(k) != '0' {
			d.lo = k
			break
		}
	}
	for k := n - 1; k >= d.lo; k-- {
		if d.digit(k) != '0' {
			d.hi = k
			break
		}
	}
	if d.isZero() {
		d.neg = false
		return d, true
	}
	d.adj = len(d.ip) + exp - d.lo
	return d, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *dec) sign() int {
	switch {
	case d.isZero():
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmpDec compares two decimals exactly: -1, 0 or +1.
func cmpDec(x, y *dec) int {
	sx, sy := x.sign(), y.sign()
	if sx != sy {
		if sx < sy {
			return -1
		}
		return 1
	}
	if sx == 0 {
		return 0
	}
	m := cmpMag(x, y)
	if sx < 0 {
		return -m
	}
	return m
}

func cmpMag(x, y *dec) int {
	if x.adj != y.adj {
		if x.adj < y.adj {
			return -1
		}
		return 1
	}
	i, j := x.lo, y.lo
	for i <= x.hi && j <= y.hi {
		a, b := x.digit(i), y.digit(j)
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case i <= x.hi:
		return 1
	case j <= y.hi:
		return -1
	}
	return 0
}

// int64 returns the value when it is an integer that fits comfortably in an int64.
func (d *dec) int64() (int64, bool) {
	if d.isZero() {
		return 0, true
	}
	if !d.isInteger() || d.adj > 18 {
		return 0, false
	}
	var v int64
	for k := 0; k < d.adj; k++ {
		v *= 10
		if i := d.lo + k; i <= d.hi {
			v += int64(d.digit(i) - '0')
		}
	}
	if d.neg {
		v = -v
	}
	return v, true
}

// scaled returns the integer X and exponent e with value = X × 10^e
// (X holds exactly the significant digits).
func (d *dec) scaled() (*big.Int, int) {
	buf := make([]byte, 0, d.sig()+1)
	if d.neg {
		buf = append(buf, '-')
	}
	for k := d.lo; k <= d.hi; k++ {
		buf = append(buf, d.digit(k))
	}
	x, _ := new(big.Int).SetString(string(buf), 10)
	return x, d.adj - d.sig()
}

// isMultiple reports whether x is an integer multiple of m (m > 0), exactly.
func isMultiple(x, m *dec) bool {
	if x.isZero() {
		return true
	}
	if a, ok := x.int64(); ok {
		if b, ok := m.int64(); ok && b != 0 {
			return a%b == 0
		}
	}
	X, ex := x.scaled()
	M, em := m.scaled()
	X.Abs(X)
	M.Abs(M)
	k := ex - em
	if k < 0 {
		// x/m = X / (M × 10^-k): X has fewer digits than 10^-k when -k
		// exceeds its length, so it cannot be a multiple.
		if -k > x.sig() {
			return false
		}
		M.Mul(M, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-k)), nil))
		return new(big.Int).Mod(X, M).Sign() == 0
	}
	// M | X × 10^k  <=>  M/g | 10^k with g = gcd(M, X), since M/g and X/g
	// are coprime. M/g divides 10^k when it is 2^a 5^b with a, b <= k.
	g := new(big.Int).GCD(nil, nil, M, X)
	r := new(big.Int).Quo(M, g)
	two, five := big.NewInt(2), big.NewInt(5)
	q, rem := new(big.Int), new(big.Int)
	for _, p := range []*big.Int{two, five} {
		n := 0
		for {
			q.QuoRem(r, p, rem)
			if rem.Sign() != 0 {
				break
			}
			r.Set(q)
			n++
			if n > k {
				return false
			}
		}
	}
	return r.Cmp(big.NewInt(1)) == 0
}

// numberOf views a decoded JSON number (json.Number, float64 or a Go
// integer) as a decimal. ok is false for non-numbers, booleans included,
// and for NaN, infinities and malformed json.Number strings.
func numberOf(v any) (dec, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDec(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dec{}, false
		}
		return parseDec(strconv.FormatFloat(x, 'g', -1, 64))
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return dec{}, false
		}
		return parseDec(strconv.FormatFloat(f, 'g', -1, 32))
	case int:
		return parseDec(strconv.Itoa(x))
	case int64:
		return parseDec(strconv.FormatInt(x, 10))
	case int32:
		return parseDec(strconv.FormatInt(int64(x), 10))
	case uint64:
		return parseDec(strconv.FormatUint(x, 10))
	case uint:
		return parseDec(strconv.FormatUint(uint64(x), 10))
	}
	return dec{}, false
}

// isNumberKind reports whether v has a numeric Go type (valid or not).
func isNumberKind(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int64, int32, uint64, uint:
		return true
	}
	return false
}
