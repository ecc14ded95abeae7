package tui

import (
	"context"
	"errors"
	"io"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/treelang/treelang/tracer"
)

// OutlineNode is one node of the program tree, listed in pre-order. Path is
// the node's JSON path, such as "/body/0/params/1".
type OutlineNode struct {
	Path  string
	Type  string
	Label string
	Depth int
}

// RunSpec is one run the debugger can show.
type RunSpec struct {
	Name    string // e.g. "retry ladder", "fail fast", "collect", "replay drift"
	Mode    string // "live", "replay" or "trace"
	Outline []OutlineNode
	Policy  string // one-line summary of the policy in force

	// Run executes the program once, emitting into t; nil for a
	// post-mortem trace. The debugger builds t with its Gate and a channel
	// sink and calls Run in a goroutine; restart cancels ctx, waits for
	// Run to return, and calls Run again with a fresh tracer. Run must
	// return soon after ctx is cancelled.
	Run func(ctx context.Context, t *tracer.Tracer) (result any, err error)

	Events []*tracer.Event // preloaded events (post-mortem trace); used only when Run is nil
	Saver  Saver           // nil when saving a fixture makes no sense

	// AcceptMismatch accepts the actual call of a replay.mismatch event as
	// the new fixture entry; nil when not replaying.
	AcceptMismatch func(e *tracer.Event) error
}

// Saver writes the fixture of a finished run.
type Saver interface {
	// Preview lists what redaction would change, with extraKeys as
	// additional key rules.
	Preview(extraKeys []string) ([]RedactionItem, error)
	// Save writes the fixture to path, leaving unredacted the items whose
	// IDs are in skip. It returns an error wrapping os.ErrExist when path
	// exists and overwrite is false.
	Save(path string, skip []int, extraKeys []string, overwrite bool) error
}

// RedactionItem is one value redaction would mask.
type RedactionItem struct {
	ID       int
	Path     string // where the value is, such as "/calls/3/arguments/token"
	Detector string // what found it, such as "key:api_key" or "bearer"
	Preview  string // the masked value as it would be saved
}

// Options configures the debugger.
type Options struct {
	Runs        []RunSpec
	KeyMapFile  string // JSON file of key bindings; empty for the defaults
	StartPaused bool   // live runs start in step mode, paused at their first event; traces open at their first event
	Width       int    // initial size; 0 = the terminal's
	Height      int
}

// focusID names the panes that can hold focus.
type focusID uint8

const (
	focusTree focusID = iota
	focusTimeline
	focusDetail
	focusCount
)

// dialogID names the dialog that takes input first, if any.
type dialogID uint8

const (
	dialogNone dialogID = iota
	dialogBreakpoints
	dialogSave
)

// startMsg asks the model to start the shown run.
type startMsg struct{ sid int }

// Model is the debugger's root model: it owns focus, layout and the view,
// and routes messages to the panes.
type Model struct {
	ctx    context.Context
	opts   Options
	keys   *KeyMap
	styles *Styles
	c      *common

	sessions []*session
	cur      int

	width, height int
	focus         focusID
	dialog        dialogID
	quitting      bool
	stopping      int // runs still returning before quit

	tree     treePane
	timeline timelinePane
	detail   detailPane
	mismatch mismatchPane
	status   statusBar
	bps      breakpointsPane
	save     saveDialog
	help     help.Model
	keyErr   error
}

// NewModel builds the root model. A key map file that cannot be used is
// reported in the status bar and the defaults are used; Run reports it as
// an error instead.
func NewModel(opts Options) Model {
	km := DefaultKeyMap()
	var keyErr error
	if opts.KeyMapFile != "" {
		km, keyErr = LoadKeyMap(opts.KeyMapFile)
		if keyErr != nil {
			km = DefaultKeyMap()
		}
	}
	return newModel(context.Background(), opts, km, keyErr)
}

func newModel(ctx context.Context, opts Options, km KeyMap, keyErr error) Model {
	st := NewStyles(true)
	c := &common{keys: &km, styles: &st, hl: newHighlighter()}
	m := Model{
		ctx:      ctx,
		opts:     opts,
		keys:     &km,
		styles:   &st,
		c:        c,
		tree:     newTreePane(c),
		timeline: newTimelinePane(c),
		detail:   newDetailPane(c),
		mismatch: newMismatchPane(c),
		status:   newStatusBar(c),
		bps:      newBreakpointsPane(c),
		save:     newSaveDialog(c),
		help:     help.New(),
		keyErr:   keyErr,
		focus:    focusTimeline,
		width:    opts.Width,
		height:   opts.Height,
	}
	m.help.Styles = st.Help
	for i, spec := range opts.Runs {
		s := newSession(i, spec)
		if opts.StartPaused && !s.canRun() {
			s.hist.seek(0) // a trace opens at its first event, as a run would
		}
		m.sessions = append(m.sessions, s)
	}
	if keyErr != nil {
		m.status.keyErr = keyErr.Error()
	}
	if m.width == 0 {
		m.width = 100
	}
	if m.height == 0 {
		m.height = 30
	}
	m = m.attach()
	return m.layout()
}

// Run starts the debugger on in and out (alternate screen, mouse) and
// returns when the user quits or ctx is cancelled, after every run
// goroutine has returned.
func Run(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	km := DefaultKeyMap()
	if opts.KeyMapFile != "" {
		var err error
		if km, err = LoadKeyMap(opts.KeyMapFile); err != nil {
			return err
		}
	}
	if len(opts.Runs) == 0 {
		return errors.New("tui: no run to show")
	}
	m := newModel(ctx, opts, km, nil)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	p := tea.NewProgram(m, popts...)
	_, err := p.Run()
	m.shutdown()
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// shutdown cancels every live run and waits for it to return.
func (m Model) shutdown() {
	for _, s := range m.sessions {
		if lr := s.live; lr != nil {
			lr.cancel()
			<-lr.finished
		}
	}
}

// sess returns the shown session, or nil.
func (m Model) sess() *session {
	if m.cur < len(m.sessions) {
		return m.sessions[m.cur]
	}
	return nil
}

// attach points every pane at the shown session.
func (m Model) attach() Model {
	s := m.sess()
	m.tree.sess, m.timeline.sess, m.detail.sess, m.mismatch.sess, m.status.sess = s, s, s, s, s
	m.status.run, m.status.runs = m.cur, len(m.sessions)
	m.timeline.lastGen = -1
	m.timeline.filtered, m.timeline.scanned = nil, 0
	m.timeline.lastCursor = -1
	m.timeline = m.timeline.sync()
	m.detail = m.detail.refresh()
	m.tree.shown = -2
	m.tree = m.tree.reveal()
	return m
}

// Init asks for the terminal's background color and starts the first run.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if s := m.sess(); s != nil && !s.started {
		cmds = append(cmds, func() tea.Msg { return startMsg{sid: s.id} })
	}
	return tea.Batch(cmds...)
}

// showMismatch reports whether the lower right pane shows the mismatch view.
func (m Model) showMismatch() bool { return m.mismatch.event() != nil }

// helpView renders the help at the bottom: short, or every binding.
func (m Model) helpView() string {
	m.help.SetWidth(m.width)
	return m.help.View(m.helpKeys())
}

// layout sizes every pane for the window.
func (m Model) layout() Model {
	w, h := m.width, m.height
	helpH := lipgloss.Height(m.helpView())
	bodyH := max(2, h-statusLines-helpH)
	leftW := max(16, min(48, w*30/100))
	if w < 50 {
		leftW = max(8, w/3)
	}
	if m.showMismatch() {
		leftW = min(leftW, max(8, w/5)) // the comparison needs the width
	}
	rightW := max(1, w-leftW-1)
	tlH := max(2, bodyH*45/100)
	if m.showMismatch() {
		tlH = max(2, bodyH*30/100) // and the height
	}
	dH := max(1, bodyH-tlH)
	m.status = m.status.SetSize(w, statusLines)
	m.tree = m.tree.SetSize(leftW, bodyH)
	m.timeline = m.timeline.SetSize(rightW, tlH)
	m.detail = m.detail.SetSize(rightW, dH)
	m.mismatch = m.mismatch.SetSize(rightW, dH)
	m.bps = m.bps.SetSize(w, bodyH)
	m.save = m.save.SetSize(w, bodyH)
	return m
}

// geometry returns the body's top row, the left column width and the
// timeline height, for mouse routing.
func (m Model) geometry() (top, leftW, tlH int) {
	return statusLines, m.tree.width, m.timeline.height
}

// updateKeys enables exactly the bindings that apply now, so the help
// stays true.
func (m *Model) updateKeys() {
	k := m.keys
	s := m.sess()
	dialog := m.dialog != dialogNone
	for _, b := range []*key.Binding{&k.Toggle, &k.Delete, &k.AddRule, &k.Confirm, &k.Cancel, &k.Yes, &k.No} {
		b.SetEnabled(dialog)
	}
	live := s != nil && s.isLive()
	k.Pause.SetEnabled(live && s.state == stateRunning)
	k.Restart.SetEnabled(s != nil && s.canRun())
	k.PrevRun.SetEnabled(len(m.sessions) > 1)
	k.NextRun.SetEnabled(len(m.sessions) > 1)
	k.Accept.SetEnabled(m.mismatch.canAccept())
	k.Save.SetEnabled(s != nil && s.spec.Saver != nil && s.started && s.ended() && s.hist.len() > 0)
	filtering := m.timeline.filter.active()
	k.NextMatch.SetEnabled(filtering)
	k.PrevMatch.SetEnabled(filtering)
	k.ClearFilter.SetEnabled(filtering && !dialog)
	k.Select.SetEnabled(m.focus == focusTree)
}

// helpKeys is the help.KeyMap for the current state: the dialog's when one
// is open, else the global bindings plus the focused pane's.
func (m Model) helpKeys() help.KeyMap {
	switch m.dialog {
	case dialogBreakpoints:
		return m.bps
	case dialogSave:
		return m.save
	}
	if m.timeline.searching {
		return inputKeys{m.keys}
	}
	return rootKeys{m: &m}
}

// inputKeys is the help while the search input is open.
type inputKeys struct{ k *KeyMap }

// ShortHelp lists submit and dismiss.
func (i inputKeys) ShortHelp() []key.Binding { return []key.Binding{i.k.Submit, i.k.Dismiss} }

// FullHelp lists the same.
func (i inputKeys) FullHelp() [][]key.Binding { return [][]key.Binding{i.ShortHelp()} }

// rootKeys is the help when no dialog or input is open.
type rootKeys struct{ m *Model }

// ShortHelp lists the essential global bindings.
func (r rootKeys) ShortHelp() []key.Binding {
	k := r.m.keys
	// Bindings that only apply now and then come early, so they show.
	return []key.Binding{k.Accept, k.Save, k.Step, k.Back, k.Continue, k.Pause, k.Break, k.NextFailure,
		k.Search, k.Help, k.Quit, k.NextPane}
}

// FullHelp lists every binding, grouped.
func (r rootKeys) FullHelp() [][]key.Binding {
	k := r.m.keys
	cols := [][]key.Binding{
		{k.Step, k.Back, k.Continue, k.Pause, k.NextFailure, k.NextRetry, k.NextCancel, k.Restart},
		{k.Break, k.Breakpoints, k.Search, k.NextMatch, k.PrevMatch, k.ClearFilter},
		{k.NextPane, k.PrevPane, k.PrevRun, k.NextRun, k.Accept, k.Save, k.Help, k.Quit},
	}
	var fp help.KeyMap
	switch r.m.focus {
	case focusTree:
		fp = r.m.tree
	case focusTimeline:
		fp = r.m.timeline
	default:
		if r.m.showMismatch() {
			fp = r.m.mismatch
		} else {
			fp = r.m.detail
		}
	}
	return append(cols, fp.FullHelp()[0])
}

// Update routes a message: run messages to their session, dialog results
// to their dialog, keys to the open dialog first, then to global bindings,
// then to the focused pane.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := m.update(msg)
	m.updateKeys()
	m.timeline = m.timeline.sync()
	m.detail = m.detail.refresh()
	if m.focus != focusTree {
		m.tree = m.tree.reveal()
	}
	m = m.layout()
	return m, cmd
}

func (m Model) session(sid int) *session {
	if sid >= 0 && sid < len(m.sessions) {
		return m.sessions[sid]
	}
	return nil
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.BackgroundColorMsg:
		st := NewStyles(msg.IsDark())
		*m.styles = st
		m.help.Styles = st.Help
		m.timeline.input.SetStyles(st.Input)
		m.save.rule.SetStyles(st.Input)
		m.save.path.SetStyles(st.Input)
		return m, nil
	case startMsg:
		s := m.session(msg.sid)
		if s == nil || s.isLive() || m.quitting {
			return m, nil
		}
		return m, s.start(m.ctx, m.opts.StartPaused)
	case eventsMsg:
		if s := m.session(msg.sid); s != nil && s.gen == msg.gen && s.isLive() {
			return m, s.onEvents(msg.events)
		}
		return m, nil
	case pausedMsg:
		if s := m.session(msg.sid); s != nil && s.gen == msg.gen && s.isLive() {
			return m, s.onPaused()
		}
		return m, nil
	case endedMsg:
		if s := m.session(msg.sid); s != nil && s.gen == msg.gen && s.isLive() {
			s.onEnded()
		}
		return m, nil
	case stoppedMsg:
		s := m.session(msg.sid)
		if s == nil {
			return m, nil
		}
		if s.gen == msg.gen && s.isLive() {
			s.onEnded()
		}
		if msg.then == thenQuit {
			m.stopping--
			if m.stopping <= 0 {
				return m, tea.Quit
			}
			return m, nil
		}
		if m.quitting {
			return m, nil
		}
		s.note = "restarted"
		return m, s.start(m.ctx, m.opts.StartPaused)
	case acceptedMsg:
		var cmd tea.Cmd
		m.mismatch, cmd = m.mismatch.Update(msg)
		return m, cmd
	case previewMsg, savedMsg:
		var cmd tea.Cmd
		m.save, cmd = m.save.Update(msg)
		return m, cmd
	case tea.MouseClickMsg:
		return m.click(msg.Mouse()), nil
	case tea.MouseWheelMsg:
		return m.wheel(msg)
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	// Anything else (cursor blinks, paste) goes to an open input.
	return m.routeInput(msg)
}

func (m Model) routeInput(msg tea.Msg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	switch {
	case m.dialog == dialogSave:
		m.save, cmd = m.save.Update(msg)
	case m.timeline.searching:
		m.timeline, cmd = m.timeline.Update(msg)
	}
	return m, cmd
}

// paneAt returns the pane under screen cell (x, y), and the row inside it.
func (m Model) paneAt(x, y int) (focusID, int, bool) {
	top, leftW, tlH := m.geometry()
	if y < top || y >= top+m.tree.height {
		return 0, 0, false
	}
	if x < leftW {
		return focusTree, y - top - 1, true
	}
	if y < top+tlH {
		return focusTimeline, y - top - 1, true
	}
	return focusDetail, y - top - tlH - 1, true
}

func (m Model) click(ms tea.Mouse) Model {
	if m.dialog != dialogNone || ms.Button != tea.MouseLeft {
		return m
	}
	f, row, ok := m.paneAt(ms.X, ms.Y)
	if !ok {
		return m
	}
	m = m.setFocus(f)
	switch f {
	case focusTimeline:
		m.timeline = m.timeline.clickRow(row)
	case focusTree:
		if r := m.tree.offset + row; row >= 0 && r < len(m.tree.sess.hist.nodes) {
			m.tree.sel = r
			m.tree = m.tree.clamp()
		}
	}
	return m
}

func (m Model) wheel(msg tea.MouseWheelMsg) (Model, tea.Cmd) {
	if m.dialog != dialogNone {
		return m, nil
	}
	ms := msg.Mouse()
	f, _, ok := m.paneAt(ms.X, ms.Y)
	if !ok {
		return m, nil
	}
	var cmd tea.Cmd
	switch f {
	case focusTree:
		m.tree, cmd = m.tree.Update(msg)
	case focusTimeline:
		m.timeline, cmd = m.timeline.Update(msg)
	default:
		if m.showMismatch() {
			m.mismatch, cmd = m.mismatch.Update(msg)
		} else {
			m.detail, cmd = m.detail.Update(msg)
		}
	}
	return m, cmd
}

func (m Model) setFocus(f focusID) Model {
	m.focus = f
	m.tree.focused = f == focusTree
	m.timeline.focused = f == focusTimeline
	m.detail.focused = f == focusDetail
	m.mismatch.focused = f == focusDetail
	return m
}

// quit cancels every live run and quits once all have returned.
func (m Model) quit() (Model, tea.Cmd) {
	if m.quitting {
		return m, nil
	}
	m.quitting = true
	var cmds []tea.Cmd
	for _, s := range m.sessions {
		if s.isLive() {
			m.stopping++
			s.note = "stopping the run…"
			cmds = append(cmds, s.stop(thenQuit))
		}
	}
	if len(cmds) == 0 {
		return m, tea.Quit
	}
	return m, tea.Batch(cmds...)
}

// switchRun shows run i, starting it the first time.
func (m Model) switchRun(i int) (Model, tea.Cmd) {
	n := len(m.sessions)
	if n == 0 {
		return m, nil
	}
	m.cur = ((i % n) + n) % n
	m.timeline.filter = filterSpec{}
	m = m.attach()
	if s := m.sess(); !s.started {
		return m, s.start(m.ctx, m.opts.StartPaused)
	}
	return m, nil
}

func (m Model) key(k tea.KeyPressMsg) (Model, tea.Cmd) {
	km := m.keys
	var cmd tea.Cmd
	// Dialogs and the search input take input first.
	switch m.dialog {
	case dialogBreakpoints:
		m.bps, cmd = m.bps.Update(k)
		if m.bps.closed {
			m.dialog = dialogNone
		}
		return m, cmd
	case dialogSave:
		m.save, cmd = m.save.Update(k)
		if m.save.closed {
			m.dialog = dialogNone
		}
		return m, cmd
	}
	if m.timeline.searching {
		m.timeline, cmd = m.timeline.Update(k)
		return m, cmd
	}
	s := m.sess()
	if s == nil {
		if key.Matches(k, km.Quit) {
			return m.quit()
		}
		return m, nil
	}
	switch {
	case key.Matches(k, km.Quit):
		return m.quit()
	case key.Matches(k, km.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(k, km.Step):
		s.step()
	case key.Matches(k, km.Back):
		s.back()
	case key.Matches(k, km.Continue):
		s.cont()
	case key.Matches(k, km.Pause):
		s.pause()
	case key.Matches(k, km.NextFailure):
		s.runToNext(tracer.BreakFailure, "failure")
	case key.Matches(k, km.NextRetry):
		s.runToNext(tracer.BreakRetry, "retry")
	case key.Matches(k, km.NextCancel):
		s.runToNext(tracer.BreakCancel, "cancellation")
	case key.Matches(k, km.Restart):
		if s.isLive() {
			s.note = "restarting…"
			return m, s.stop(thenRestart)
		}
		s.note = "restarted"
		m.timeline.filtered, m.timeline.scanned = nil, 0
		return m, s.start(m.ctx, m.opts.StartPaused)
	case key.Matches(k, km.PrevRun):
		return m.switchRun(m.cur - 1)
	case key.Matches(k, km.NextRun):
		return m.switchRun(m.cur + 1)
	case key.Matches(k, km.Break):
		m.toggleBreak()
	case key.Matches(k, km.Breakpoints):
		tool := ""
		if e := s.hist.selected(); e != nil {
			tool = e.Tool
		}
		path := ""
		if n, ok := m.tree.selectedNode(); ok {
			path = n.Path
		}
		m.bps = m.bps.open(s, tool, path)
		m.dialog = dialogBreakpoints
	case key.Matches(k, km.Search):
		m = m.setFocus(focusTimeline)
		m.timeline, cmd = m.timeline.openSearch()
	case key.Matches(k, km.NextMatch):
		m.timeline = m.timeline.match(1)
	case key.Matches(k, km.PrevMatch):
		m.timeline = m.timeline.match(-1)
	case key.Matches(k, km.ClearFilter):
		m.timeline = m.timeline.setFilter("")
		s.note = "filter cleared"
	case key.Matches(k, km.Accept):
		m.mismatch, cmd = m.mismatch.accept()
	case key.Matches(k, km.Save):
		m.save, cmd = m.save.open(s.spec.Saver, defaultFixturePath(s.spec.Name))
		m.dialog = dialogSave
	case key.Matches(k, km.NextPane):
		m = m.setFocus((m.focus + 1) % focusCount)
	case key.Matches(k, km.PrevPane):
		m = m.setFocus((m.focus + focusCount - 1) % focusCount)
	default:
		switch m.focus {
		case focusTree:
			m.tree, cmd = m.tree.Update(k)
		case focusTimeline:
			m.timeline, cmd = m.timeline.Update(k)
		case focusDetail:
			if m.showMismatch() {
				m.mismatch, cmd = m.mismatch.Update(k)
			} else {
				m.detail, cmd = m.detail.Update(k)
			}
		}
	}
	return m, cmd
}

// toggleBreak sets or clears a breakpoint on the selected tree node (tree
// focused) or on the selected event's tool.
func (m *Model) toggleBreak() {
	s := m.sess()
	if m.focus == focusTree {
		if n, ok := m.tree.selectedNode(); ok {
			s.toggleBreakpoint(tracer.Breakpoint{Kind: tracer.BreakNode, Path: n.Path})
		}
		return
	}
	e := s.hist.selected()
	switch {
	case e != nil && e.Tool != "":
		s.toggleBreakpoint(tracer.Breakpoint{Kind: tracer.BreakTool, Tool: e.Tool})
	case e != nil && e.Site.Path != "":
		s.toggleBreakpoint(tracer.Breakpoint{Kind: tracer.BreakNode, Path: e.Site.Path})
	default:
		s.note = "select an event with a tool or a node first"
	}
}

// defaultFixturePath suggests a file name from the run's name.
func defaultFixturePath(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if base == "" {
		base = "fixture"
	}
	return base + ".fixture.json"
}

// View renders the whole screen: status bar, tree | timeline over detail,
// help; an open dialog replaces the panes.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	if s := m.sess(); s != nil && s.spec.Name != "" {
		v.WindowTitle = "treelang debug — " + s.spec.Name
	}
	return v
}

func (m Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.status.View())
	b.WriteByte('\n')
	bodyH := m.tree.height
	switch m.dialog {
	case dialogBreakpoints, dialogSave:
		var box string
		if m.dialog == dialogSave {
			box = m.save.View()
		} else {
			box = m.bps.View()
		}
		placed := lipgloss.Place(m.width, bodyH, lipgloss.Center, lipgloss.Center, box)
		b.WriteString(strings.Join(fitBlock(strings.Split(placed, "\n"), m.width, bodyH), "\n"))
	default:
		left := strings.Split(m.tree.View(), "\n")
		right := strings.Split(m.timeline.View(), "\n")
		if m.showMismatch() {
			right = append(right, strings.Split(m.mismatch.View(), "\n")...)
		} else {
			right = append(right, strings.Split(m.detail.View(), "\n")...)
		}
		sep := m.styles.Separator.Render("│")
		for i := range bodyH {
			if i > 0 {
				b.WriteByte('\n')
			}
			l, r := "", ""
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			b.WriteString(fitLine(l, m.tree.width))
			b.WriteString(sep)
			b.WriteString(fitLine(r, m.timeline.width))
		}
	}
	b.WriteByte('\n')
	hv := strings.Split(m.helpView(), "\n")
	b.WriteString(strings.Join(fitBlock(hv, m.width, len(hv)), "\n"))
	return b.String()
}
