package pipeline_test

import (
	"testing"

	"github.com/pricewatch/pricewatch/config"
	"github.com/pricewatch/pricewatch/pipeline/pipelinetest"
)

// gauge0 reads an unlabelled gauge from the env's registry.
func gauge0(t *testing.T, env *pipelinetest.Env, name string) float64 {
	t.Helper()
	fams, err := env.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// The scheduled page check (history.page_check_schedule, on by default)
// checks the live file and says so in /metrics: no check yet reads 0; a
// check of a sound file sets its time and 0 problems. (Damage found by it:
// store's TestCheckPagesLive_FindsDamageInALargeFile.)
func TestPipeline_ScheduledPageCheck(t *testing.T) {
	if config.Default().History.PageCheckSchedule == "" {
		t.Fatal("no page check scheduled by default")
	}
	env := pipelinetest.New(t, nil, nil)
	if at := gauge0(t, env, "pricewatch_db_page_check_timestamp_seconds"); at != 0 {
		t.Errorf("before any check: %v", at)
	}
	pc, err := env.Pipeline.CheckPages()
	if err != nil || pc.Problems != 0 || pc.Bytes == 0 {
		t.Fatalf("check of a sound file: %+v %v", pc, err)
	}
	if at, want := gauge0(t, env, "pricewatch_db_page_check_timestamp_seconds"), float64(pc.At.UnixNano())/1e9; at != want {
		t.Errorf("check time %v, want %v", at, want)
	}
	if n := gauge0(t, env, "pricewatch_db_page_check_problems"); n != 0 {
		t.Errorf("problems %v", n)
	}
}
