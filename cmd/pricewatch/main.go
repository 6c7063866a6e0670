// Command pricewatch watches public GPU prices, ranks them by cost per
// million tokens and tells Slack when the best choice changes.
//
//	pricewatch serve  [--config FILE] [--db FILE] [--addr HOST:PORT] [--demo | --fixtures DIR]
//	pricewatch scrape [--config FILE] [--db FILE] [--demo | --fixtures DIR] [-v] [SOURCE...]
//	pricewatch sources [--config FILE] [--db FILE] [--json]
//	pricewatch plan   [--config FILE] [--db FILE] [--spec FILE] [job flags…] [--json]
//	pricewatch estimate (--preset P | --model-config FILE | shape flags) --card C [--gpus N] [--method M] [layout, serving or training flags…] [--json]
//	pricewatch profile set --card C --workload W --tps N [--provider P] | import FILE … | list | delete
//	pricewatch digest [--config FILE] [--db FILE] [--send] [--json]
//	pricewatch alerts [--status S] [--limit N] [--json] [--db FILE | --demo] [--addr HOST:PORT]
//	pricewatch silence add --watch W --for 6h --reason TEXT | list | remove ID
//	pricewatch best   [--config FILE] [--db FILE] --workload W [--card C] [--mode M] [--currency CUR] [--json]
//	pricewatch export [--format csv|json] [--provider P] [--out DIR]
//	pricewatch version | --version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/pricewatch/pricewatch/scrapers/all" // register every source
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A second signal exits at once: NotifyContext stops catching after the
	// first cancel only once stop() runs, so watch for it ourselves.
	go func() {
		<-ctx.Done()
		stop()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		fmt.Fprintln(os.Stderr, "pricewatch: second signal, exiting now")
		os.Exit(2)
	}()
	if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pricewatch:", err)
		os.Exit(exitCode(err))
	}
}

const usage = `pricewatch: where is it cheapest to get my GPU job done, right now?

Commands:
  serve   run the daemon: scheduled scrapes, HTTP API, Slack alerts
  scrape  scrape sources once and print a summary line per source
  best    print the best offer per card for a workload, from the database
  offers  list every offer of a card (CARD[:N], e.g. H100:8), cheapest first,
          with --max-price, --gpus, --vendor, --min-total-gpu-memory, --region
  sources print every source's health: status, last run and success, offers,
          unknown GPU names, failures, last error; sources accept SOURCE
          accepts the new level of a source the gate holds
  plan    price a job: memory, GPU count, hours, compute and hidden costs,
          total and pessimistic cost to target, per option
  estimate print one throughput estimate (a model on GPUs of one card):
          tokens/s, layout, precision, memory per GPU, whether it fits;
          offline, the answer of POST /v1/estimate
  profile set, import, list or delete throughput profiles (your measured tokens/s)
  digest  print today's digest (--send: queue it for Slack and deliver it)
  alerts  list the alert outbox, newest first: pending, sent, logged (no
          Slack configured) and failed messages
  silence add, list or remove silences of watches
  compact roll history older than the raw window into daily rows and shrink
          the database file (the daemon does the first part daily)
  export  export the current offers in gpuhunt's catalog layout (CSV or JSON)
  version print the module version, commit and build date

Run "pricewatch <command> -h" for a command's flags and an example.`

// Run executes one command line (main's testable body). A -h or --help
// prints the command's help to stdout and returns nil.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := run(ctx, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return usageError{"no command given"}
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "scrape":
		return runScrape(ctx, args[1:], stdout, stderr)
	case "best":
		return runBest(ctx, args[1:], stdout, stderr)
	case "offers":
		return runOffers(ctx, args[1:], stdout, stderr)
	case "sources":
		return runSources(ctx, args[1:], stdout, stderr)
	case "plan":
		return runPlan(ctx, args[1:], stdout, stderr)
	case "estimate":
		return runEstimate(ctx, args[1:], stdout, stderr)
	case "profile":
		return runProfile(ctx, args[1:], stdout, stderr)
	case "digest":
		return runDigest(ctx, args[1:], stdout, stderr)
	case "alerts":
		return runAlerts(ctx, args[1:], stdout, stderr)
	case "silence":
		return runSilence(ctx, args[1:], stdout, stderr)
	case "compact":
		return runCompact(ctx, args[1:], stdout, stderr)
	case "export":
		return runExport(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}
