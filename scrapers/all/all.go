// Package all registers every source; import it for its side effect.
package all

import (
	_ "github.com/pricewatch/pricewatch/scrapers/alibaba"      // Alibaba Cloud ECS China-site price file (CNY)
	_ "github.com/pricewatch/pricewatch/scrapers/autodl"       // AutoDL market search / list prices (CNY)
	_ "github.com/pricewatch/pricewatch/scrapers/aws"          // AWS Price List bulk offers: aws and aws-china
	_ "github.com/pricewatch/pricewatch/scrapers/awsspot"      // AWS EC2 Spot price feed + Spot Instance Advisor
	_ "github.com/pricewatch/pricewatch/scrapers/azure"        // Azure Retail Prices API
	_ "github.com/pricewatch/pricewatch/scrapers/cloudrift"    // CloudRift instance-types/list
	_ "github.com/pricewatch/pricewatch/scrapers/cnyindex"     // rentgpu CNY price index (cny-index)
	_ "github.com/pricewatch/pricewatch/scrapers/coreweave"    // CoreWeave pricing page
	_ "github.com/pricewatch/pricewatch/scrapers/digitalocean" // DigitalOcean Droplet sizes API (token)
	_ "github.com/pricewatch/pricewatch/scrapers/ecb"          // ECB euro reference rates
	_ "github.com/pricewatch/pricewatch/scrapers/gcp"          // Google Cloud Billing Catalog API (GPU SKUs)
	_ "github.com/pricewatch/pricewatch/scrapers/gpushare"     // 恒源云 gpushare machine market (CNY, token)
	_ "github.com/pricewatch/pricewatch/scrapers/hetzner"      // Hetzner Robot dedicated GPU servers (EUR, user)
	_ "github.com/pricewatch/pricewatch/scrapers/hyperstack"   // Hyperstack flavors × pricebook (key)
	_ "github.com/pricewatch/pricewatch/scrapers/jarvislabs"   // JarvisLabs server_meta (key)
	_ "github.com/pricewatch/pricewatch/scrapers/lambda"       // Lambda instance-types API (key); pricing page without one
	_ "github.com/pricewatch/pricewatch/scrapers/linode"       // Akamai (Linode) instance types API
	_ "github.com/pricewatch/pricewatch/scrapers/matpool"      // 矩池云 matpool machine market (CNY, token)
	_ "github.com/pricewatch/pricewatch/scrapers/openrouter"   // OpenRouter model list: per-token API prices
	_ "github.com/pricewatch/pricewatch/scrapers/oracle"       // Oracle Cloud price list (cetools products API)
	_ "github.com/pricewatch/pricewatch/scrapers/ovhcloud"     // OVHcloud public order catalog (Public Cloud, EUR)
	_ "github.com/pricewatch/pricewatch/scrapers/runpod"       // RunPod GraphQL
	_ "github.com/pricewatch/pricewatch/scrapers/scaleway"     // Scaleway Instance products/servers (EUR)
	_ "github.com/pricewatch/pricewatch/scrapers/seeweb"       // Seeweb Cloud Server GPU plans (EUR, token)
	_ "github.com/pricewatch/pricewatch/scrapers/skypilot"     // SkyPilot catalog feed
	_ "github.com/pricewatch/pricewatch/scrapers/tencent"      // Tencent Cloud CVM configurations with prices (CNY, key)
	_ "github.com/pricewatch/pricewatch/scrapers/tensordock"   // TensorDock legacy marketplace
	_ "github.com/pricewatch/pricewatch/scrapers/vast"         // Vast.ai offer search
	_ "github.com/pricewatch/pricewatch/scrapers/verda"        // Verda (DataCrunch) instance types (OAuth2 client)
	_ "github.com/pricewatch/pricewatch/scrapers/vultr"        // Vultr plans API (Cloud GPU)

	// Aggregators (each offer names the cloud behind it) and a marketplace, issue 33.
	_ "github.com/pricewatch/pricewatch/scrapers/lium"           // Lium public node feed (marketplace)
	_ "github.com/pricewatch/pricewatch/scrapers/mithril"        // Mithril spot auctions × instance types (key)
	_ "github.com/pricewatch/pricewatch/scrapers/primeintellect" // Prime Intellect availability (aggregator, key)
	_ "github.com/pricewatch/pricewatch/scrapers/shadeform"      // Shadeform instance types (aggregator, key)
	_ "github.com/pricewatch/pricewatch/scrapers/spheron"        // Spheron GPU offers (aggregator)

	// GPU clouds with direct APIs, issue 33.
	_ "github.com/pricewatch/pricewatch/scrapers/cudo"       // CUDO Compute machine types (per-component prices)
	_ "github.com/pricewatch/pricewatch/scrapers/fluidstack" // Fluidstack available configurations (key)
	_ "github.com/pricewatch/pricewatch/scrapers/hotaisle"   // Hot Aisle available VMs (key, team)
	_ "github.com/pricewatch/pricewatch/scrapers/hyperbolic" // Hyperbolic GPU catalog (key)
	_ "github.com/pricewatch/pricewatch/scrapers/novita"     // Novita AI GPU instance products (key)
)
