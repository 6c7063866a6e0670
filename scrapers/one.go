package scrapers

import (
	"context"
	"fmt"

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
