// Package all registers every source; import it for its side effect.
package all

import (
	_ "github.com/pricewatch/pricewatch/scrapers/runpod" // RunPod GraphQL
)
