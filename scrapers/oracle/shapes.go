package oracle

// shape is one OCI GPU shape billed by a part number.
type shape struct {
	Name string
	GPUs int
}

// part is what a GPU part number prices: the card (named as normalize
// resolves it), its memory, and the shapes that bill it.
type part struct {
	Card     string
	MemoryGB float64
	Shapes   []shape
}

// shapes maps OCI's GPU part numbers to their shapes. Shapes, GPU counts
// and models: Oracle's compute shape reference
// (docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm,
// "GPU shapes"); part numbers as the price list names them (the real
// capture in fixtures/oracle: "… GPU - B300", "Bare Metal GPU Standard -
// X7") and an independent public OCI price builder pairs them
// (fixtures/oracle/PROVENANCE.md). Every shape's price, count × the part's
// price, is checked against SkyPilot's OCI catalog (TestScraper_MatchesSkyPilotCatalog).
// The form factor of the 8-GPU bare-metal boards (A100, H100, H200, B200,
// B300) is the HGX/NVSwitch board those shapes are (8 GPUs with NVLink),
// named SXM here; VM.GPU3's V100 is the SXM2 part; X7's P100 the PCIe card.
// The RTX PRO 6000's edition is not stated: it resolves to the edition-not-
// stated card (RTX-PRO-6000-96GB, the slowest edition's figures: a lower
// bound, not a guess). B109480 ("GPU - H100T") bills BM.GPU.H100T.8, a shape
// Oracle's shape reference does not list: its name is read from public OCI
// HPC/OKE scripts (RDMA set-up per shape, field diagnostics), which treat it
// beside BM.GPU.H100.8 with the same 16 RDMA NIC ports; ".8" is its GPU
// count as in every OCI bare-metal GPU shape name. Neither its form factor
// nor its memory is stated anywhere we read, so it is named plain "H100"
// with no memory: the H100-80GB lower-bound card. B93544 ("GPU - E4") names
// no GPU: reported under its part number, never guessed.
var shapes = map[string]part{
	"B88517":  {"P100 PCIE", 16, []shape{{"BM.GPU2.2", 2}}},
	"B88518":  {"P100 PCIE", 16, []shape{{"VM.GPU2.1", 1}}},
	"B89734":  {"V100 SXM2 16GB", 16, []shape{{"VM.GPU3.1", 1}, {"VM.GPU3.2", 2}, {"VM.GPU3.4", 4}, {"BM.GPU3.8", 8}}},
	"B95909":  {"A10", 24, []shape{{"VM.GPU.A10.1", 1}, {"VM.GPU.A10.2", 2}, {"BM.GPU.A10.4", 4}}},
	"B92740":  {"A100 SXM4 40GB", 40, []shape{{"BM.GPU4.8", 8}}},
	"B95907":  {"A100 SXM4 80GB", 80, []shape{{"BM.GPU.A100-v2.8", 8}}},
	"B109479": {"L40S", 48, []shape{{"BM.GPU.L40S.4", 4}}},
	"B98415":  {"H100 SXM", 80, []shape{{"BM.GPU.H100.8", 8}}},
	"B109480": {"H100", 0, []shape{{"BM.GPU.H100T.8", 8}}},
	"B110519": {"H200 SXM", 141, []shape{{"BM.GPU.H200.8", 8}}},
	"B109485": {"MI300X", 192, []shape{{"BM.GPU.MI300X.8", 8}}},
	"B111758": {"MI355X", 288, []shape{{"BM.GPU.MI355X.8", 8}}},
	"B110978": {"B200", 180, []shape{{"BM.GPU.B200.8", 8}}},
	"B110979": {"GB200", 186, []shape{{"BM.GPU.GB200.4", 4}}},
	"B112237": {"B300", 0, []shape{{"BM.GPU.B300.8", 8}}},
	"B112140": {"GB300", 0, []shape{{"BM.GPU.GB300.4", 4}}},
	"B112613": {"RTX PRO 6000", 96, []shape{{"BM.GPU.RTXPRO.8", 8}}},
}
