package main

import (
	"flag"
	"fmt"
	"io"
	"sync"
)

// helpText is each command's synopsis, what it does and one example,
// printed with its flags by -h or --help (exit status 0).
var helpText = map[string][3]string{
	"serve": {"serve [--config FILE] [--db FILE] [--addr HOST:PORT] [--demo | --fixtures DIR]",
		"Run the daemon: scrape every enabled source at once and then on its schedule, serve the HTTP API and the dashboard, alert Slack.",
		"pricewatch serve --demo   # then open http://127.0.0.1:8080/"},
	"scrape": {"scrape [--config FILE] [--db FILE] [--demo | --fixtures DIR] [-v] [SOURCE...]",
		"Scrape the named sources (default: every enabled one) once and print a line per source. While a daemon holds the database, it asks the daemon to run them (POST /v1/scrape/{source}, needs PRICEWATCH_API_TOKEN).",
		"pricewatch scrape --demo runpod vast"},
	"best": {"best --workload W [--card C] [--mode M] [--currency CUR] [--max-gpus N] [--utilization U] [--json] [--db FILE | --demo] [--addr HOST:PORT]",
		"Print the best offer per card for a workload, priced at its rentable unit, from the database or the running daemon.",
		"pricewatch best --demo --workload lora-7b --currency CNY"},
	"sources": {"sources [--json] [--check [--fixtures DIR]] [--db FILE | --demo] [--addr HOST:PORT] | sources accept SOURCE",
		"Print every source's health, or with --check run every scraper over the fixtures into a scratch database; accept a held source's new level with sources accept SOURCE.",
		"pricewatch sources --demo"},
	"sources accept": {"sources accept SOURCE [--db FILE | --demo] [--addr HOST:PORT]",
		"Accept the level a held source shows — its prices moved as a whole beyond the band from its accepted level, or its layout lost offers — and run it: the run showing that level is applied and becomes the source's accepted level. Through the daemon when it runs (needs PRICEWATCH_API_TOKEN there).",
		"pricewatch sources accept runpod"},
	"plan": {"plan [--spec FILE] [--workload W] [job flags…] [--json] [--db FILE | --demo] [--addr HOST:PORT]",
		"Price a job on every eligible offer: memory, GPUs, hours, compute and hidden costs, total and pessimistic cost.",
		"pricewatch plan --demo --workload lora-7b --tokens 15e6 --modes ondemand --limit 5"},
	"estimate": {"estimate (--preset P | --model-config FILE | --params-b N --layers N --hidden N --heads N) --card C [--gpus N] [--method serve|full|lora|qlora] [--precision P] [--engine E] [--tp N] [--pp N] [--ep N] [--dp N] [--input-tokens N --output-tokens N] [--concurrency N] [--seq-len N] [--micro-batch N] [--json]",
		"Print one throughput estimate, the figure rankings and plans use: tokens/s per GPU and in all, the layout (and whether it is the engine's default), the precision used, the memory per GPU and whether the job fits (with the reason when not). Computed offline from the embedded card catalog, without a database or a daemon; --json prints exactly what POST /v1/estimate answers.",
		"pricewatch estimate --preset llama3-70b --card H100-80GB-SXM --gpus 4"},
	"profile set": {"profile set --card C --workload W --tps N [--provider P [--offer O]] [--gpus N] [--note TEXT]",
		"Store your measured tokens/s per GPU for a card and workload; with --provider (and --offer) it applies to that provider's (offer's) rentals only and is checked against the card's norm. Through the daemon when it runs (needs PRICEWATCH_API_TOKEN there).",
		"pricewatch profile set --card A100-80GB-SXM --workload lora-7b --tps 2750 --provider runpod --note \"1h, packed\""},
	"profile import": {"profile import FILE --card C --workload W [--provider P [--offer O]] [--gpus N] [--seq-len N] [--format F] [--field F] [--warmup N]",
		"Read the throughput from a run's own output (Hugging Face Trainer trainer_state.json or printed metrics, torchtune metric log, vLLM benchmark_serving result JSON) and store it as a measured profile, with a note naming the file and figure.",
		"pricewatch profile import trainer_state.json --card H100-80GB-SXM --workload lora-7b --provider runpod --gpus 8"},
	"profile list": {"profile list [--card C] [--workload W] [--provider P] [--below-norm] [--json]",
		"List the stored throughput profiles with their origin and, for provider measurements, how they compare with the card's norm.",
		"pricewatch profile list --card RTX-4090"},
	"profile delete": {"profile delete --card C --workload W [--provider P [--offer O]]",
		"Remove a measured profile; a card-wide one gives way to the reference figure again.",
		"pricewatch profile delete --card RTX-4090 --workload lora-7b --provider vast"},
	"digest": {"digest [--send] [--json] [--db FILE | --demo] [--addr HOST:PORT]",
		"Print today's digest (from the running daemon's GET /v1/digest while it runs); --send queues it for Slack and says whether it was sent (without Slack settings it is kept in the outbox as logged: see pricewatch alerts).",
		"pricewatch digest --demo"},
	"alerts": {"alerts [--status pending|sent|logged|failed] [--limit N] [--json] [--db FILE | --demo] [--addr HOST:PORT]",
		"List the alert outbox, newest first, with the pending and failed counts: from the database, or from the running daemon's GET /v1/alerts. A logged message was not sent: no Slack was configured, so it went to the log only.",
		"pricewatch alerts --demo --status failed"},
	"silence add": {"silence add --watch W --for 6h --reason TEXT",
		"Silence a watch (or * for all) for a while; its state still advances.",
		"pricewatch silence add --watch lora-7b/ondemand --for 6h --reason \"maintenance\""},
	"silence list":   {"silence list", "List the silences.", "pricewatch silence list"},
	"silence remove": {"silence remove ID", "Remove a silence.", "pricewatch silence remove 3"},
	"export": {"export [--format csv|json] [--provider P] [--out DIR] [--db FILE | --demo] [--addr HOST:PORT]",
		"Export the current rentable on-demand and spot offers in gpuhunt's v2 catalog layout (price in USD per instance-hour of the rentable unit; pricewatch's fields in provider_data). --out DIR writes one file per provider, as gpuhunt's catalog loader wants.",
		"pricewatch export --demo --out /tmp/catalog && ls /tmp/catalog"},
	"version": {"version", "Print the module version, commit and build date.", "pricewatch version"},
}

// helpOut holds the standard output of each flag set, where -h prints.
var helpOut sync.Map // *flag.FlagSet → io.Writer

// newFlags is a command's flag set: parse errors and usage go to stderr,
// but -h and --help print the command's help to stdout.
func newFlags(name string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	helpOut.Store(fs, stdout)
	fs.Usage = func() {
		w := fs.Output()
		h, ok := helpText[name]
		if !ok {
			h = [3]string{name, "", ""}
		}
		fmt.Fprintf(w, "usage: pricewatch %s\n\n%s\n\nFlags:\n", h[0], h[1])
		fs.PrintDefaults()
		if h[2] != "" {
			fmt.Fprintf(w, "\nExample:\n  %s\n", h[2])
		}
	}
	return fs
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

// groupHelp prints a command group's subcommands (profile, silence).
func groupHelp(w io.Writer, group string, subs ...string) {
	fmt.Fprintf(w, "usage: pricewatch %s <%s>\n\n", group, joinWords(subs, "|"))
	for _, s := range subs {
		h := helpText[group+" "+s]
		fmt.Fprintf(w, "  pricewatch %s\n      %s\n      e.g. %s\n", h[0], h[1], h[2])
	}
	fmt.Fprintf(w, "\nRun \"pricewatch %s <%s> -h\" for its flags.\n", group, subs[0])
}

func joinWords(s []string, sep string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += sep
		}
		out += v
	}
	return out
}
