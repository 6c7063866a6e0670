package rank

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Presets come from two tables: data/models.csv, the generic shapes of the
// built-in workloads (given field by field), and data/configs/sources.csv,
// one row per model people serve, each read from the model's own
// config.json (data/configs/<preset>.json) by ModelFromConfig. Preset ids
// are the publisher's model name in lower case without the organisation
// or the -Instruct/-it suffix (gpt-oss-120b, qwen3-30b-a3b, deepseek-r1,
// glm-4.5-air); Meta's Llama ids are written as Meta's llama CLI lists
// them, "llama3.1-70b", "llama4-scout-17b-16e".

//go:embed data/models.csv
var modelsCSV []byte

//go:embed data/configs
var configFS embed.FS

// Presets returns the named models a job spec may use, by name.
func Presets() map[string]Model { return presets() }

// PresetNames lists the preset ids, sorted.
func PresetNames() []string { return slices.Sorted(maps.Keys(presets())) }

// PresetSource is where a config preset's figures come from: its
// config.json and the parameter counts its publisher states.
type PresetSource struct {
	Preset, Repo, ConfigURL string
	TotalParamsB, ActiveB   float64 // as the publisher states them (0: not stated)
	ParamsURL               string
}

// PresetSources lists the config presets' sources, in table order.
func PresetSources() []PresetSource { return presetSources() }

var presetSources = sync.OnceValue(func() []PresetSource {
	b, err := configFS.ReadFile("data/configs/sources.csv")
	if err != nil {
		panic(fmt.Sprintf("rank: data/configs/sources.csv: %v", err))
	}
	rows, err := readCSV(b)
	if err != nil {
		panic(fmt.Sprintf("rank: data/configs/sources.csv: %v", err))
	}
	var out []PresetSource
	for _, r := range rows[1:] {
		num := func(s string) float64 { f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64); return f }
		out = append(out, PresetSource{Preset: r[0], Repo: r[1], ConfigURL: r[2], TotalParamsB: num(r[4]), ActiveB: num(r[5]), ParamsURL: r[6]})
	}
	return out
})

func readCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err == nil && len(rows) < 1 {
		err = io.ErrUnexpectedEOF
	}
	return rows, err
}

var presets = sync.OnceValue(func() map[string]Model {
	rows, err := readCSV(modelsCSV)
	if err != nil || len(rows) < 2 {
		panic(fmt.Sprintf("rank: embedded models.csv: %v", err))
	}
	m := map[string]Model{}
	for _, row := range rows[1:] {
		p, err1 := strconv.ParseFloat(row[1], 64)
		var ints [5]int
		for i := range ints {
			v, err := strconv.Atoi(row[2+i])
			if err != nil {
				panic(fmt.Sprintf("rank: models.csv %s: %v", row[0], err))
			}
			ints[i] = v
		}
		if err1 != nil {
			panic(fmt.Sprintf("rank: models.csv %s: %v", row[0], err1))
		}
		m[row[0]] = Model{Name: row[0], ParamsB: p, Layers: ints[0], Hidden: ints[1], Heads: ints[2], KVHeads: ints[3], HeadDim: ints[4], SourceURL: row[7]}
	}
	for _, s := range presetSources() {
		raw, err := configFS.ReadFile("data/configs/" + s.Preset + ".json")
		if err != nil {
			panic(fmt.Sprintf("rank: preset %s: %v", s.Preset, err))
		}
		md, err := ModelFromConfig(raw)
		if err != nil {
			panic(fmt.Sprintf("rank: preset %s: %v", s.Preset, err))
		}
		md.Name, md.SourceURL = s.Preset, s.ConfigURL
		m[s.Preset] = md
	}
	return m
})
