package scrapers_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pricewatch/pricewatch/scrapers"
)

// A key comes from the environment, else from the file NAME_FILE names
// (a systemd credential), trimmed; the environment wins; a file that
// cannot be read gives no key.
func TestEnvSecret_File(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lambda-key")
	if err := os.WriteFile(file, []byte("  secret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"file", map[string]string{"K_FILE": file}, "secret-from-file"},
		{"env wins", map[string]string{"K": "from-env", "K_FILE": file}, "from-env"},
		{"missing file", map[string]string{"K_FILE": filepath.Join(dir, "none")}, ""},
		{"neither", map[string]string{}, ""},
	} {
		env := &scrapers.Env{Getenv: func(k string) string { return c.env[k] }}
		if got := env.Secret("K"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
