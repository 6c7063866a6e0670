// Package slacktest is a loopback Slack Web API for tests: chat.postMessage
// (with message metadata), conversations.history (with Slack's time range,
// paging and include_all_metadata) and conversations.list, answering after
// a configurable delay. A post is committed when its delay has passed,
// whether or not the client is still waiting for the answer — as on the
// real Slack, a client killed mid-request may still have posted.
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Channel is the fake workspace's one channel.
const (
	ChannelID   = "C0PRICEWATCH"
	ChannelName = "gpu"
)

// Posted is a message the fake accepted.
type Posted struct {
	TS       string
	Text     string
	Metadata slack.SlackMetadata
}

// Server is the fake. Set the exported fields before it serves.
type Server struct {
	// Delay is how long every answer takes.
	Delay time.Duration
	// Now stamps posts (nil: time.Now); tests with a fake clock pass it so
	// the ts of a post falls where the sender looks for it.
	Now func() time.Time

	mu      sync.Mutex
	script  []string // next chat.postMessage answers
	history []string // next conversations.history answers
	down    bool
	posted  []Posted
	calls   map[string]int
	lastTS  int64 // µs of the last ts handed out: each ts is unique
}

// Script queues the answers of the next chat.postMessage calls: "ok",
// "500", "429:<seconds>" or a Slack error code; when they run out, "ok".
func (s *Server) Script(answers ...string) {
	s.mu.Lock()
	s.script = append(s.script, answers...)
	s.mu.Unlock()
}

// ScriptHistory queues the answers of the next conversations.history
// calls, in the same spelling ("ok" serves the history).
func (s *Server) ScriptHistory(answers ...string) {
	s.mu.Lock()
	s.history = append(s.history, answers...)
	s.mu.Unlock()
}

// SetDown makes every call answer 500 while set.
func (s *Server) SetDown(v bool) { s.mu.Lock(); s.down = v; s.mu.Unlock() }

// Posted returns the messages in the channel, oldest first.
func (s *Server) Posted() []Posted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Posted(nil), s.posted...)
}

// Texts returns the texts of the messages in the channel, oldest first.
func (s *Server) Texts() []string {
	var out []string
	for _, p := range s.Posted() {
		out = append(out, p.Text)
	}
	return out
}

// Calls is the number of calls of a method ("" : of every method).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if method != "" {
		return s.calls[method]
	}
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// next pops the next scripted answer of q ("ok" when empty or down: "500").
func (s *Server) next(q *[]string) string {
	if s.down {
		return "500"
	}
	if len(*q) == 0 {
		return "ok"
	}
	a := (*q)[0]
	*q = (*q)[1:]
	return a
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	form, _ := url.ParseQuery(string(body))
	for k, v := range r.URL.Query() {
		form[k] = v
	}
	// The server works on, and commits, after the client has gone.
	time.Sleep(s.Delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
	var answer string
	switch method {
	case "chat.postMessage":
		answer = s.next(&s.script)
	case "conversations.history":
		answer = s.next(&s.history)
	case "conversations.list":
		answer = s.next(new([]string))
	default:
		http.NotFound(w, r)
		return
	}
	switch {
	case answer == "500":
		w.WriteHeader(http.StatusInternalServerError)
		return
	case strings.HasPrefix(answer, "429:"):
		w.Header().Set("Retry-After", strings.TrimPrefix(answer, "429:"))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	case answer != "ok":
		reply(w, map[string]any{"ok": false, "error": answer})
		return
	}
	switch method {
	case "chat.postMessage":
		s.post(w, form)
	case "conversations.history":
		s.historyPage(w, form)
	case "conversations.list":
		reply(w, map[string]any{"ok": true, "channels": []map[string]any{
			{"id": ChannelID, "name": ChannelName, "is_channel": true, "is_member": true}},
			"response_metadata": map[string]string{"next_cursor": ""}})
	}
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// chat.postMessage takes the channel's id or its name (with or without #).
func (s *Server) post(w http.ResponseWriter, form url.Values) {
	switch form.Get("channel") {
	case ChannelID, ChannelName, "#" + ChannelName:
	default:
		reply(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	p := Posted{Text: form.Get("text")}
	if md := form.Get("metadata"); md != "" {
		if err := json.Unmarshal([]byte(md), &p.Metadata); err != nil {
			reply(w, map[string]any{"ok": false, "error": "invalid_metadata_format"})
			return
		}
	}
	us := max(s.now().UnixMicro(), s.lastTS+1)
	s.lastTS = us
	p.TS = formatTS(us)
	s.posted = append(s.posted, p)
	reply(w, map[string]any{"ok": true, "channel": ChannelID, "ts": p.TS})
}

// historyPage answers conversations.history as Slack documents it: the
// channel's id only (a name is channel_not_found), messages newest first
// between oldest and latest (exclusive unless inclusive; latest defaults
// to now), limit per page (default 100, at most 999), a cursor to the next
// page with has_more, and metadata only with include_all_metadata.
func (s *Server) historyPage(w http.ResponseWriter, form url.Values) {
	if form.Get("channel") != ChannelID {
		reply(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	oldest, err1 := parseTS(form.Get("oldest"), 0)
	latest, err2 := parseTS(form.Get("latest"), s.now().UnixMicro())
	limit, err3 := strconv.Atoi(cmpOr(form.Get("limit"), "100"))
	skip, err4 := strconv.Atoi(cmpOr(strings.TrimPrefix(form.Get("cursor"), "skip:"), "0"))
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		reply(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	limit = min(max(limit, 1), 999)
	inclusive := truthy(form.Get("inclusive"))
	meta := truthy(form.Get("include_all_metadata"))
	var in []map[string]any
	for i := len(s.posted) - 1; i >= 0; i-- {
		p := s.posted[i]
		ts, _ := parseTS(p.TS, 0)
		if ts < oldest || ts > latest || !inclusive && (ts == oldest || ts == latest) {
			continue
		}
		m := map[string]any{"type": "message", "ts": p.TS, "text": p.Text}
		if meta && p.Metadata.EventType != "" {
			m["metadata"] = p.Metadata
		}
		in = append(in, m)
	}
	page := in[min(skip, len(in)):]
	more := len(page) > limit
	next := ""
	if more {
		page, next = page[:limit], "skip:"+strconv.Itoa(skip+limit)
	}
	reply(w, map[string]any{"ok": true, "messages": page, "has_more": more,
		"response_metadata": map[string]string{"next_cursor": next}})
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func truthy(s string) bool { return s == "1" || s == "true" }

// formatTS spells microseconds since the epoch as a Slack ts.
func formatTS(us int64) string { return fmt.Sprintf("%d.%06d", us/1e6, us%1e6) }

// parseTS reads a Slack ts ("1234567890.123456", or whole seconds) as
// microseconds; empty is def.
func parseTS(s string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || len(frac) > 6 {
		return 0, fmt.Errorf("bad ts %q", s)
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt((frac + "000000")[:6], 10, 64); err != nil {
			return 0, fmt.Errorf("bad ts %q", s)
		}
	}
	return n*1e6 + f, nil
}
