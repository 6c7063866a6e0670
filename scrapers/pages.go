package scrapers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Pages describes a list an API serves a page at a time: the page
// parameters put on the source's URL, the bound on pages one run reads,
// and how a page's body parses.
type Pages[T any] struct {
	// PageParam and SizeParam name the query parameters of the page
	// number (from 1) and its size; Size is the size asked for.
	PageParam, SizeParam string
	Size                 int
	// Max bounds the pages read in one run: a list longer than that
	// fails the run rather than passing for the whole market.
	Max int
	// Parse reads one page: its items, and whether it is the last
	// (given how many items came before it).
	Parse func(body []byte, page, before int) (items []T, last bool, err error)
}

// FetchPages reads pages 1, 2, … of a paged list with the same headers
// until one says it is the last. Errors name the source and the page.
func FetchPages[T any](ctx context.Context, env *Env, name string, hdr http.Header, p Pages[T]) ([]T, error) {
	c, err := env.NewCollector(ctx)
	if err != nil {
		return nil, err
	}
	var all []T
	for page := 1; ; page++ {
		u, err := pageURL(env.URL(), p.PageParam, page, p.SizeParam, p.Size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		resp, err := env.Fetch(ctx, c, Request{URL: u, Header: hdr})
		if err != nil {
			return nil, fmt.Errorf("%s page %d: %w", name, page, err)
		}
		items, last, err := p.Parse(resp.Body, page, len(all))
		if err != nil {
			return nil, fmt.Errorf("%s page %d: %w", name, page, err)
		}
		all = append(all, items...)
		if last || len(items) == 0 {
			return all, nil
		}
		if page >= p.Max {
			return nil, fmt.Errorf("%s: %d items after %d pages, more to come: page limit reached", name, len(all), p.Max)
		}
	}
}

// pageURL is base with the page number and size set.
func pageURL(base, pageParam string, page int, sizeParam string, size int) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bad url %q", base)
	}
	q := u.Query()
	q.Set(pageParam, strconv.Itoa(page))
	if sizeParam != "" {
		q.Set(sizeParam, strconv.Itoa(size))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
