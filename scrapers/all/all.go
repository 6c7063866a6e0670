// Package all registers every source; import it for its side effect.
package all

import (
	_ "github.com/pricewatch/pricewatch/scrapers/azure"  // Azure Retail Prices API
	_ "github.com/pricewatch/pricewatch/scrapers/ecb"    // ECB euro reference rates
	_ "github.com/pricewatch/pricewatch/scrapers/lambda" // Lambda pricing page
	_ "github.com/pricewatch/pricewatch/scrapers/runpod" // RunPod GraphQL
	_ "github.com/pricewatch/pricewatch/scrapers/vast"   // Vast.ai offer search
)
