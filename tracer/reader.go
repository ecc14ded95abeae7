package tracer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// LineError reports a trace line that cannot be read.
type LineError struct {
	Line int // 1-based
	Err  error
}

// Error reports the line number and the problem, as in
// `line 12: field "seq": want a non-negative integer, found -2`.
func (e *LineError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error() }

// Unwrap returns the underlying problem.
func (e *LineError) Unwrap() error { return e.Err }

// Reader streams events from a trace file written by JSONLWriter.
//
// It checks the header line, decodes numbers in values as json.Number and
// tolerates a truncated last line (one without a final newline that is not
// valid JSON, as a crash mid-write leaves): it then ends with io.EOF and
// Warning reports the line. A malformed line anywhere else is a *LineError.
// Blank lines are skipped.
//
// The Reader reads ahead a batch of lines and decodes it on two goroutines
// when the batch is large; no goroutine outlives a call to Next. A Reader
// is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	line    int
	started bool
	err     error // sticky: io.EOF or the error returned
	warning string
	long    []byte
	version int

	ins     [2]*interner // one per decoding goroutine
	pending error        // the read error that ends the lines after the batch
	text    []byte       // the batch's lines, back to back
	batch   []decoded
	next    int
}

// decoded is one line of a batch.
type decoded struct {
	start, end int // the line in Reader.text
	line       int
	last       bool // no newline ended it
	e          *Event
	err        error
}

// Batching: lines read ahead per batch, and the least that is worth
// splitting over two goroutines.
const (
	batchLines    = 512
	parallelLines = 128
)

// NewReader returns a Reader of the trace in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), ins: [2]*interner{newInterner(), newInterner()}}
}

// Version returns the format version named by the header, once the first
// call to Next has read it.
func (r *Reader) Version() int { return r.version }

// Warning describes a problem that was tolerated, such as
// "line 1234: truncated last line ignored", or is empty.
func (r *Reader) Warning() string { return r.warning }

// readLine returns the next line without its newline, and whether it was
// the last one (no newline ended it). The slice is valid until the next
// call.
func (r *Reader) readLine() (line []byte, last bool, err error) {
	r.long = r.long[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			r.line++
			if len(r.long) > 0 {
				r.long = append(r.long, chunk...)
				chunk = r.long
			}
			return chunk[:len(chunk)-1], false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.long = append(r.long, chunk...)
		case err == io.EOF:
			if len(r.long) > 0 {
				r.long = append(r.long, chunk...)
				chunk = r.long
			}
			if len(chunk) == 0 {
				return nil, true, io.EOF
			}
			r.line++
			return chunk, true, nil
		default:
			return nil, false, err
		}
	}
}

// Next returns the next event, or io.EOF after the last one.
func (r *Reader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	if !r.started {
		r.started = true
		if err := r.readHeader(); err != nil {
			r.err = err
			return nil, err
		}
	}
	for r.next == len(r.batch) {
		if r.pending != nil {
			r.err = r.pending
			return nil, r.err
		}
		r.fill()
	}
	d := &r.batch[r.next]
	r.next++
	e, err := d.e, d.err
	d.e = nil
	if err != nil {
		if d.last {
			r.warning = "line " + strconv.Itoa(d.line) + ": truncated last line ignored"
			r.err = io.EOF
			return nil, io.EOF
		}
		r.err = &LineError{Line: d.line, Err: err}
		return nil, r.err
	}
	return e, nil
}

// fill reads the next batch of non-blank lines and decodes them. A read
// error (io.EOF included) is kept in r.pending for after the batch.
func (r *Reader) fill() {
	r.text = r.text[:0]
	r.batch = r.batch[:0]
	r.next = 0
	for len(r.batch) < batchLines {
		line, last, err := r.readLine()
		if err != nil {
			r.pending = err
			break
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			if last {
				r.pending = io.EOF
				break
			}
			continue
		}
		start := len(r.text)
		r.text = append(r.text, line...)
		r.batch = append(r.batch, decoded{start: start, end: len(r.text), line: r.line, last: last})
		if last {
			r.pending = io.EOF
			break
		}
	}
	decode := func(ds []decoded, in *interner) {
		for i := range ds {
			ds[i].e, ds[i].err = decodeEvent(r.text[ds[i].start:ds[i].end], in)
		}
	}
	if n := len(r.batch); n >= parallelLines {
		var wg sync.WaitGroup
		wg.Go(func() { decode(r.batch[n/2:], r.ins[1]) })
		decode(r.batch[:n/2], r.ins[0])
		wg.Wait()
	} else {
		decode(r.batch, r.ins[0])
	}
}

func (r *Reader) readHeader() error {
	want := "want " + header[:len(header)-1]
	line, last, err := r.readLine()
	if err == io.EOF {
		return &LineError{1, errors.New("missing trace header: the input is empty; " + want)}
	}
	if err != nil {
		return err
	}
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a byte order mark
	line = bytes.TrimSuffix(line, []byte{'\r'})
	p := parser{data: line}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] != '{' {
		return &LineError{1, errors.New("missing trace header: not a JSON object; " + want)}
	}
	var format, seq bool
	version := int64(-1)
	var formatName string
	perr := p.members(func(key []byte) error {
		var err error
		switch string(key) {
		case "format":
			format = true
			formatName, err = p.str()
		case "version":
			version, err = p.integer(32)
		case "seq":
			seq = true
			_, err = p.value()
		default:
			_, err = p.value()
		}
		if err != nil {
			err = &fieldErr{string(key), err}
		}
		return err
	})
	if perr == nil {
		perr = p.end()
	}
	switch {
	case perr != nil && last:
		return &LineError{1, errors.New("truncated trace header; " + want)}
	case perr != nil:
		return &LineError{1, fmt.Errorf("malformed trace header: %w", perr)}
	case !format && seq:
		return &LineError{1, errors.New("missing trace header: the first line is an event; " + want)}
	case !format:
		return &LineError{1, errors.New(`missing trace header: no "format"; ` + want)}
	case formatName != Format:
		return &LineError{1, fmt.Errorf("format %q is not a treelang trace; %s", formatName, want)}
	case version < 0:
		return &LineError{1, errors.New(`trace header has no "version"; ` + want)}
	case version < 1:
		return &LineError{1, fmt.Errorf("invalid trace version %d", version)}
	case version > Version:
		return &LineError{1, fmt.Errorf("trace version %d is newer than this program reads (version %d); upgrade treelang", version, Version)}
	}
	r.version = int(version)
	return nil
}

// ReadAll reads the remaining events. The error is nil at a clean end of
// the trace.
func (r *Reader) ReadAll() ([]*Event, error) {
	var events []*Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, e)
	}
}

// ReadFile reads the trace file at path. The warning reports a tolerated
// problem such as a truncated last line. On error, the events read before
// it are returned too.
func ReadFile(path string) (events []*Event, warning string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	r := NewReader(f)
	events, err = r.ReadAll()
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return events, r.Warning(), err
}
