package scrapers

import (
	"context"
	"fmt"
	"net/http"

	"github.com/pricewatch/pricewatch"
)

// FetchOne runs a source whose whole answer is one request: a fresh
// collector, r fetched once, the body parsed, the offers counted. Errors
// name the source.
func FetchOne(ctx context.Context, env *Env, name string, r Request,
	parse func(body []byte) ([]pricewatch.Observation, error)) (Result, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return Result{}, err
	}
	resp, err := env.Fetch(ctx, c, r)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	obs, err := parse(resp.Body)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	env.AddOffers(len(obs))
	return Result{Observations: obs}, nil
}

// NeedSecrets is a Check: a *Disabled naming what (why the secrets are
// needed) unless every one of names is set.
func NeedSecrets(env *Env, what string, names ...string) error {
	for _, n := range names {
		if env.Secret(n) == "" {
			list := names[0]
			for _, m := range names[1:] {
				list += " and " + m
			}
			return &Disabled{Reason: "needs " + list + " (" + what + ")"}
		}
	}
	return nil
}

// KeyedJSON is a source read with one GET of a JSON document that needs an
// API key: disabled (Check) until KeyEnv is set, the key sent in the
// headers Header makes of it, the body read by Parse.
type KeyedJSON struct {
	// What names the key for the disabled message ("a Hyperbolic API key");
	// Fetch names the document in errors ("catalog").
	What, KeyEnv, Fetch string
	Header              func(key string) http.Header
	Parse               func(body []byte, url string) ([]pricewatch.Observation, error)
}

// Check disables the source until its key is set.
func (k KeyedJSON) Check(env *Env) error { return NeedSecrets(env, k.What, k.KeyEnv) }

// Scrape fetches the document once, asking for JSON.
func (k KeyedJSON) Scrape(ctx context.Context, env *Env) (Result, error) {
	if err := k.Check(env); err != nil {
		return Result{}, err
	}
	h := k.Header(env.Secret(k.KeyEnv))
	h.Set("Accept", "application/json")
	return FetchOne(ctx, env, k.Fetch, Request{URL: env.URL(), Header: h},
		func(b []byte) ([]pricewatch.Observation, error) { return k.Parse(b, env.URL()) })
}

// Bearer is the Authorization header of a bearer key.
func Bearer(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }
