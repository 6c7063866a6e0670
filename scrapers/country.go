package scrapers

import "strings"

// countryCodes are the ISO 3166-1 alpha-2 codes of the country names
// marketplaces write in full (TensorDock's "United States"). A name not
// listed is no country: an offer is left out of a country narrowing rather
// than placed by a guess.
var countryCodes = map[string]string{
	"united states": "US", "united states of america": "US", "usa": "US", "canada": "CA", "mexico": "MX",
	"brazil": "BR", "argentina": "AR", "chile": "CL", "united kingdom": "GB", "uk": "GB", "ireland": "IE",
	"france": "FR", "germany": "DE", "netherlands": "NL", "belgium": "BE", "luxembourg": "LU", "switzerland": "CH",
	"austria": "AT", "italy": "IT", "spain": "ES", "portugal": "PT", "poland": "PL", "czechia": "CZ",
	"czech republic": "CZ", "sweden": "SE", "norway": "NO", "finland": "FI", "denmark": "DK", "iceland": "IS",
	"estonia": "EE", "latvia": "LV", "lithuania": "LT", "romania": "RO", "bulgaria": "BG", "greece": "GR",
	"hungary": "HU", "croatia": "HR", "slovenia": "SI", "slovakia": "SK", "serbia": "RS", "ukraine": "UA",
	"turkey": "TR", "israel": "IL", "united arab emirates": "AE", "saudi arabia": "SA", "india": "IN",
	"singapore": "SG", "japan": "JP", "south korea": "KR", "korea": "KR", "taiwan": "TW", "hong kong": "HK",
	"china": "CN", "australia": "AU", "new zealand": "NZ", "south africa": "ZA", "indonesia": "ID",
	"malaysia": "MY", "thailand": "TH", "vietnam": "VN", "philippines": "PH",
}

// CountryCode is the ISO 3166-1 alpha-2 code of a country's English name,
// "" when the name is not one countryCodes lists.
func CountryCode(name string) string {
	return countryCodes[strings.ToLower(strings.TrimSpace(name))]
}
