package tracer
import ("testing";"encoding/json")
func BenchmarkXAppend(b *testing.B){ e:=benchEvent(); e.Time=t0; buf:=make([]byte,0,4096); b.ReportAllocs(); for b.Loop(){ buf,_=appendEvent(buf[:0],e)} }
func BenchmarkXDecode(b *testing.B){ e:=benchEvent(); e.Time=t0; buf,_:=appendEvent(nil,e); in:=newInterner(); b.ReportAllocs(); for b.Loop(){ decodeEvent(buf, in)} }
func BenchmarkXStd(b *testing.B){ e:=benchEvent(); e.Time=t0; buf,_:=appendEvent(nil,e); b.ReportAllocs(); for b.Loop(){ var m map[string]any; json.Unmarshal(buf,&m)} }
