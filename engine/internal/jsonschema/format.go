package jsonschema

import (
	"net/netip"
	"net/url"
	"regexp"
	"strings"
)

// formats are the asserted formats. Each applies to strings only; other
// formats are annotations and always pass.
var formats = map[string]func(string) bool{
	"date":                  isDate,
	"date-time":             isDateTime,
	"email":                 isEmail,
	"idn-email":             isEmail,
	"ipv4":                  isIPv4,
	"ipv6":                  isIPv6,
	"json-pointer":          isJSONPointer,
	"regex":                 isRegex,
	"relative-json-pointer": isRelativeJSONPointer,
	"time":                  isTime,
	"uri":                   isURI,
	"uuid":                  isUUID,
}

// isEmail is the Python checker's rule: the string contains an "@".
func isEmail(s string) bool { return strings.Contains(s, "@") }

func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}

func isRegex(s string) bool {
	_, err := regexp.Compile(s)
	return err == nil
}

// isUUID accepts the hyphenated 8-4-4-4-12 form of 32 hex digits, any case.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// digits parses exactly n ASCII digits at s[i:].
func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for k := i; k < i+n; k++ {
		if !isDigit(s[k]) {
			return 0, false
		}
		v = v*10 + int(s[k]-'0')
	}
	return v, true
}

// fullDate checks YYYY-MM-DD with a real calendar date (year 1 to 9999).
func fullDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, ok1 := digits(s, 0, 4)
	m, ok2 := digits(s, 5, 2)
	d, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || y == 0 || m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= daysIn(y, m)
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func isDate(s string) bool { return fullDate(s) }

// isDateTime is RFC 3339 date-time as the Python rfc3339-validator reads
// it: "T" and "Z" in either case, seconds 00-59, an optional fraction, a
// mandatory offset, and (like Python's "$") one optional trailing newline.
func isDateTime(s string) bool {
	s = strings.TrimSuffix(s, "\n")
	if len(s) < 11 || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	return fullDate(s[:10]) && timePart(s[11:])
}

// isTime is what Python's FormatChecker() really applies to "time": the
// draft 3 checker, datetime.strptime(s, "%H:%M:%S"). Each field has one or
// two digits; hours 0-23, minutes and seconds 0-59; no fraction or offset.
func isTime(s string) bool {
	limits := [3]int{23, 59, 59}
	for i, lim := range limits {
		end := strings.IndexByte(s, ':')
		if i == 2 {
			end = len(s)
		}
		if end < 1 || end > 2 {
			return false
		}
		v, ok := digits(s, 0, end)
		if !ok || v > lim {
			return false
		}
		if i < 2 {
			s = s[end+1:]
		}
	}
	return true
}

// isJSONPointer is RFC 6901: empty, or "/"-prefixed with "~" only in the
// escapes "~0" and "~1".
func isJSONPointer(s string) bool {
	if s != "" && s[0] != '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
			return false
		}
	}
	return true
}

// isRelativeJSONPointer is a non-negative integer followed by "#" or a JSON
// pointer. Like Python's checker it rejects a digit after a "0" digit, so
// "01" and also "100" fail.
func isRelativeJSONPointer(s string) bool {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		if i > 0 && s[i-1] == '0' {
			return false
		}
		i++
	}
	if i == 0 {
		return false
	}
	return s[i:] == "#" || isJSONPointer(s[i:])
}

func timePart(s string) bool {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := digits(s, 0, 2)
	m, ok2 := digits(s, 3, 2)
	sec, ok3 := digits(s, 6, 2)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return false
	}
	i := 8
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	rest := s[i:]
	if rest == "Z" || rest == "z" {
		return true
	}
	if len(rest) != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	oh, ok1 := digits(rest, 1, 2)
	om, ok2 := digits(rest, 4, 2)
	return ok1 && ok2 && oh <= 23 && om <= 59
}

// isURI accepts an absolute URI (RFC 3986): a scheme, then only URI
// characters, with well-formed percent escapes.
func isURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 {
		return false
	}
	for i := 0; i < colon; i++ {
		c := s[i]
		alpha := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (i == 0 || !(isDigit(c) || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	for i := colon + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', isDigit(c):
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	_, err := url.Parse(s)
	return err == nil
}
