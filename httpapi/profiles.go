package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/pricewatch/pricewatch"
	"github.com/pricewatch/pricewatch/normalize"
	"github.com/pricewatch/pricewatch/profileimport"
	"github.com/pricewatch/pricewatch/rank"
)

// Writer is the optional part of a Backend that stores measured profiles.
// SetProfile returns the norm check of a provider- or offer-level
// measurement (nil for a card-wide one).
type Writer interface {
	SetProfile(ctx context.Context, p rank.Profile) (*rank.NormCheck, error)
	DeleteProfile(ctx context.Context, card, workload, provider, offer string) (bool, error)
	Profiles() ([]rank.Profile, error)
	NormChecks() []rank.NormCheck
}

func (s *Server) writer() (Writer, error) {
	wr, ok := s.backend.(Writer)
	if !ok {
		return nil, pricewatch.Errorf(pricewatch.ENotFound, "profiles are not available")
	}
	return wr, nil
}

// ProfileEntry is a stored profile as /v1/profiles lists it: with its
// scope, the origin label rankings show, and the norm check of a provider-
// or offer-level measurement.
type ProfileEntry struct {
	rank.Profile
	Scope string          `json:"scope"`
	Label rank.Origin     `json:"origin_label"`
	Norm  *rank.NormCheck `json:"norm,omitempty"`
}

// ProfileResponse answers a write of a profile: the profile stored, its
// norm check where it has one, and for an import what was read.
type ProfileResponse struct {
	ProfileEntry
	Import *profileimport.Result `json:"import,omitempty"`
	// Warnings say what of an import may not be the workload's (its
	// model); the stored note carries them too.
	Warnings []string `json:"warnings,omitempty"`
}

// NewProfileEntry is a profile as listed, with its norm check (nil when it
// has none).
func NewProfileEntry(p rank.Profile, norm *rank.NormCheck) ProfileEntry {
	return ProfileEntry{Profile: p, Scope: p.Scope(), Label: p.Label(), Norm: norm}
}

// ProfileEntries lists profiles with the norm checks that apply to them.
func ProfileEntries(ps []rank.Profile, checks []rank.NormCheck) []ProfileEntry {
	norms := make(map[string]rank.NormCheck, len(checks))
	for _, c := range checks {
		norms[c.Key()] = c
	}
	out := make([]ProfileEntry, 0, len(ps))
	for _, p := range ps {
		var norm *rank.NormCheck
		if c, ok := norms[p.Key()]; ok {
			norm = &c
		}
		out = append(out, NewProfileEntry(p, norm))
	}
	return out
}

func (s *Server) listProfiles(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := checkParams(q, "card", "workload", "origin", "provider", "below_norm"); err != nil {
		return err
	}
	belowOnly := false
	if v := q.Get("below_norm"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return pricewatch.Errorf(pricewatch.EInvalid, "below_norm: want true or false, got %q", v)
		}
		belowOnly = b
	}
	wr, err := s.writer()
	if err != nil {
		return err
	}
	ps, err := wr.Profiles()
	if err != nil {
		return err
	}
	out := []ProfileEntry{}
	for _, e := range ProfileEntries(ps, wr.NormChecks()) {
		if (q.Get("card") != "" && e.Card != q.Get("card")) || (q.Get("workload") != "" && e.Workload != q.Get("workload")) ||
			(q.Get("origin") != "" && string(e.Origin) != q.Get("origin")) || (q.Get("provider") != "" && e.Provider != q.Get("provider")) ||
			(belowOnly && (e.Norm == nil || !e.Norm.BelowNorm)) {
			continue
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"profiles": out})
	return nil
}

// ProfileBody is the body of PUT /v1/profiles/{card}/{workload}.
type ProfileBody struct {
	TokensPerSecond float64 `json:"tokens_per_second"`
	Note            string  `json:"note,omitempty"`
	// GPUs is the tensor-parallel group a serving figure was measured on
	// (0 or 1: one GPU).
	GPUs int `json:"gpus,omitempty"`
}

const bodyHint = `want one {"tokens_per_second": N, "note": "…", "gpus": N}`

// MaxProfileGPUs bounds the GPU count of a measurement: no offer rents more
// in one unit.
const MaxProfileGPUs = 64

// ProfileTarget is what a profile write is about: card, workload and where
// it was measured, checked against the current ranking.
type ProfileTarget struct {
	Card, Workload, Provider, Offer string
	w                               rank.Workload
}

// parseTarget reads a profile's target for a request (the card and workload
// from the path or query, provider and offer from the query).
func (s *Server) parseTarget(card, workload string, q url.Values) (ProfileTarget, error) {
	v, err := s.view()
	if err != nil {
		return ProfileTarget{}, err
	}
	return ResolveProfileTarget(v.Snapshot, card, workload, q.Get("provider"), q.Get("offer"))
}

// ResolveProfileTarget checks a profile's card, workload, provider and
// offer against the catalog and snapshot; errors name the field.
func ResolveProfileTarget(snap *rank.Snapshot, card, workload, provider, offer string) (ProfileTarget, error) {
	t := ProfileTarget{Card: card, Workload: workload, Provider: provider, Offer: offer}
	if t.Card == "" {
		return t, pricewatch.Errorf(pricewatch.EInvalid, "card: required (a canonical card id, e.g. H100-80GB-SXM)")
	}
	if _, ok := normalize.DefaultCatalog().Card(t.Card); !ok {
		return t, pricewatch.Errorf(pricewatch.EInvalid, "card: unknown card %q", t.Card)
	}
	if t.Workload == "" {
		return t, pricewatch.Errorf(pricewatch.EInvalid, "workload: required (one of %s)", workloadNames(snap))
	}
	w, ok := snap.Workload(t.Workload)
	if !ok {
		return t, pricewatch.Errorf(pricewatch.EInvalid, "workload: unknown workload %q (one of %s)", t.Workload, workloadNames(snap))
	}
	t.w = w
	if err := CheckScope(t.Provider, t.Offer); err != nil {
		return t, err
	}
	if t.Provider != "" && !snap.HasProvider(t.Provider, t.Offer) {
		if t.Offer != "" {
			return t, pricewatch.Errorf(pricewatch.EInvalid, "offer: no current offer %q of provider %q", t.Offer, t.Provider)
		}
		return t, pricewatch.Errorf(pricewatch.EInvalid, "provider: no current offer is from %q", t.Provider)
	}
	return t, nil
}

// CheckScope validates where a measurement was taken: a provider is a
// short lower-case name as offers give it; an offer ID needs its provider.
func CheckScope(provider, offer string) error {
	if len(provider) > 64 || strings.IndexFunc(provider, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return pricewatch.Errorf(pricewatch.EInvalid, "provider: want a provider name as offers give it (lower-case letters, digits, - _ .; at most 64)")
	}
	if offer == "" {
		return nil
	}
	if provider == "" {
		return pricewatch.Errorf(pricewatch.EInvalid, "offer: needs provider (an offer ID is the provider's)")
	}
	if len(offer) > 200 || strings.IndexFunc(offer, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return pricewatch.Errorf(pricewatch.EInvalid, "offer: want an offer ID as /v1/offers shows it (printable, at most 200 bytes)")
	}
	return nil
}

// Profile is the measured profile of the target: tokens per second per
// GPU, and for a serving workload the tensor-parallel group it ran on.
func (t ProfileTarget) Profile(tps float64, gpus int, note string) rank.Profile {
	p := rank.Profile{Card: t.Card, Workload: t.Workload, TokensPerSecond: tps, Origin: rank.OriginMeasured,
		Note: note, Provider: t.Provider, Offer: t.Offer}
	if t.w.Method == rank.MethodServe && gpus > 1 {
		p.GPUs = gpus // the tensor-parallel group the serving figure is for
	}
	return p
}

// ImportProfile reads a log or result file for the target and returns the
// measured profile to store, what was read and the warnings of the match
// with the workload (profileimport.Match). Its errors are the input's or the
// options' fault: profileimport's own (*profileimport.OptionError, a
// refused kind included), or an invalid figure.
func (t ProfileTarget) ImportProfile(data []byte, opt profileimport.Options) (rank.Profile, profileimport.Result, []string, error) {
	res, err := profileimport.Import(data, opt)
	if err != nil {
		return rank.Profile{}, res, nil, err
	}
	warnings, err := profileimport.Match(res, t.w)
	if err != nil {
		return rank.Profile{}, res, nil, err
	}
	if !(res.TokensPerSecondPerGPU >= rank.MinProfileTokensPerSecond && res.TokensPerSecondPerGPU < rank.MaxProfileTokensPerSecond) {
		return rank.Profile{}, res, nil, pricewatch.Errorf(pricewatch.EInvalid, "body: the figure read, %g tokens/s per GPU, is outside %g..%g", res.TokensPerSecondPerGPU,
			float64(rank.MinProfileTokensPerSecond), float64(rank.MaxProfileTokensPerSecond))
	}
	note := "measured: " + res.Note
	for _, w := range warnings {
		note += "; warning: " + w
	}
	return t.Profile(res.TokensPerSecondPerGPU, opt.GPUs, note), res, warnings, nil
}

func (s *Server) putProfile(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r); err != nil {
		return err
	}
	q := r.URL.Query()
	if err := checkParams(q, "provider", "offer"); err != nil {
		return err
	}
	t, err := s.parseTarget(r.PathValue("card"), r.PathValue("workload"), q)
	if err != nil {
		return err
	}
	var body ProfileBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return pricewatch.Errorf(pricewatch.EInvalid, "invalid body: %v (%s)", err, bodyHint)
	}
	if trailing(dec) {
		return pricewatch.Errorf(pricewatch.EInvalid, "trailing data after the profile (%s)", bodyHint)
	}
	if !(body.TokensPerSecond >= rank.MinProfileTokensPerSecond && body.TokensPerSecond < rank.MaxProfileTokensPerSecond) {
		return pricewatch.Errorf(pricewatch.EInvalid, "tokens_per_second: must be within %g..%g", float64(rank.MinProfileTokensPerSecond), float64(rank.MaxProfileTokensPerSecond))
	}
	if body.GPUs < 0 || body.GPUs > MaxProfileGPUs {
		return pricewatch.Errorf(pricewatch.EInvalid, "gpus: must be within 0..%d", MaxProfileGPUs)
	}
	if len(body.Note) > 500 {
		return pricewatch.Errorf(pricewatch.EInvalid, "note: at most 500 characters")
	}
	return s.storeProfile(w, r.Context(), t.Profile(body.TokensPerSecond, body.GPUs, strings.TrimSpace("measured: "+body.Note)), nil, nil)
}

func (s *Server) storeProfile(w http.ResponseWriter, ctx context.Context, p rank.Profile, imp *profileimport.Result, warnings []string) error {
	wr, err := s.writer()
	if err != nil {
		return err
	}
	c, err := wr.SetProfile(ctx, p)
	if err != nil {
		return fmt.Errorf("store profile: %w", err)
	}
	res := ProfileResponse{ProfileEntry: NewProfileEntry(p, c), Import: imp, Warnings: warnings}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r); err != nil {
		return err
	}
	q := r.URL.Query()
	if err := checkParams(q, "provider", "offer"); err != nil {
		return err
	}
	card, workload, provider, offer := r.PathValue("card"), r.PathValue("workload"), q.Get("provider"), q.Get("offer")
	if err := CheckScope(provider, offer); err != nil {
		return err
	}
	wr, err := s.writer()
	if err != nil {
		return err
	}
	ok, err := wr.DeleteProfile(r.Context(), card, workload, provider, offer)
	if err != nil {
		return fmt.Errorf("delete profile: %w", err)
	}
	if !ok {
		return pricewatch.Errorf(pricewatch.ENotFound, "no measured profile of %s %s at that scope", card, workload)
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
	return nil
}

// importParams are the query parameters of POST /v1/profiles/import, named
// as the CLI's flags are.
var importParams = []string{"card", "workload", "provider", "offer", "format", "name",
	profileimport.OptionGPUs, profileimport.OptionSeqLen, profileimport.OptionField, profileimport.OptionWarmup}

// importProfile reads a log or result file (the raw body) of one of
// profileimport's formats and stores the figure as a measured profile.
func (s *Server) importProfile(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r); err != nil {
		return err
	}
	q := r.URL.Query()
	if err := checkParams(q, importParams...); err != nil {
		return err
	}
	t, err := s.parseTarget(q.Get("card"), q.Get("workload"), q)
	if err != nil {
		return err
	}
	opt := profileimport.Options{Format: q.Get("format"), Name: q.Get("name")}
	for _, f := range []struct {
		name string
		dst  *int
		min  int
	}{{profileimport.OptionGPUs, &opt.GPUs, 1}, {profileimport.OptionSeqLen, &opt.SeqLen, 1}, {profileimport.OptionWarmup, &opt.WarmupSteps, -1}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < f.min || n > 1<<20 {
				return pricewatch.Errorf(pricewatch.EInvalid, "%s: want a whole number of at least %d, got %q", f.name, f.min, v)
			}
			*f.dst = n
		}
	}
	if opt.GPUs > MaxProfileGPUs {
		return pricewatch.Errorf(pricewatch.EInvalid, "gpus: must be within 1..%d", MaxProfileGPUs)
	}
	opt.Field = q.Get(profileimport.OptionField)
	if len(opt.Name) > 200 || strings.IndexFunc(opt.Name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return pricewatch.Errorf(pricewatch.EInvalid, "name: want a printable file name of at most 200 bytes")
	}
	if opt.Name == "" {
		opt.Name = "uploaded file"
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, profileimport.MaxInputBytes+1))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return pricewatch.Errorf(ETooLarge, "body: larger than %d bytes", profileimport.MaxInputBytes)
	case err != nil:
		return pricewatch.Errorf(pricewatch.EInvalid, "body: %v", err)
	}
	p, res, warnings, err := t.ImportProfile(data, opt)
	if err != nil {
		return importError(err)
	}
	return s.storeProfile(w, r.Context(), p, &res, warnings)
}

// importError turns an import failure into a 400 naming the option at
// fault, else the body.
func importError(err error) error {
	var pe *pricewatch.Error
	if errors.As(err, &pe) {
		return err
	}
	var oe *profileimport.OptionError
	if errors.As(err, &oe) {
		return pricewatch.Errorf(pricewatch.EInvalid, "%s: %s", oe.Option, oe.Reason)
	}
	if errors.Is(err, profileimport.ErrUnknownFormat) {
		return pricewatch.Errorf(pricewatch.EInvalid, "format: %v", err)
	}
	return pricewatch.Errorf(pricewatch.EInvalid, "body: %v", err)
}
