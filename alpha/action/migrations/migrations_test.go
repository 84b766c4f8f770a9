package migrations

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/property"
)

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level   string
		want    []string
		wantErr string
	}{
		{level: "none", want: []string{"none"}},
		{level: "bundle-object-to-csv-metadata", want: []string{"none", "bundle-object-to-csv-metadata"}},
		{level: "all", want: []string{"none", "bundle-object-to-csv-metadata"}},
		{level: "split-icon", wantErr: `unknown migration level "split-icon"`},
		{level: "", wantErr: `unknown migration level ""`},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			t.Parallel()
			m, err := New(tt.level)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Names(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("names %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHelpText pins upstream's help text layout (a tabwriter table).
func TestHelpText(t *testing.T) {
	t.Parallel()
	want := "\nThe migrator will run all migrations up to and including the selected level.\n\n" +
		"Available migrators:\n" +
		"  - none                          : do nothing\n" +
		"  - bundle-object-to-csv-metadata : migrates bundles' \"olm.bundle.object\" to \"olm.csv.metadata\"\n"
	if got := HelpText(); got != want {
		t.Errorf("HelpText:\n%s\nwant:\n%s", got, want)
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	csv := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"a.v1.0.0"},"spec":{"version":"1.0.0","displayName":"A","keywords":["x"]}}`
	bundle := func(image string) declcfg.Bundle {
		return declcfg.Bundle{
			Schema: declcfg.SchemaBundle, Name: "a.v1.0.0", Package: "a", Image: image,
			Properties: []property.Property{
				{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"a","version":"1.0.0"}`)},
				{Type: property.TypeBundleObject, Value: json.RawMessage(`{"data":"e30="}`)},
			},
			CsvJSON: csv,
		}
	}
	cfg := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{bundle("quay.io/a:v1"), bundle("")}}

	none, err := New(None)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Migrate(cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Bundles[0].Properties) != 2 || cfg.Bundles[0].Properties[1].Type != property.TypeBundleObject {
		t.Fatalf("level none changed the bundle: %+v", cfg.Bundles[0].Properties)
	}

	m, err := New(BundleObjectToCSVMetadata)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(cfg); err != nil {
		t.Fatal(err)
	}
	props := cfg.Bundles[0].Properties
	if len(props) != 2 || props[0].Type != property.TypePackage || props[1].Type != property.TypeCSVMetadata {
		t.Fatalf("migrated properties %+v, want olm.package then olm.csv.metadata", props)
	}
	if v := string(props[1].Value); !strings.Contains(v, `"displayName":"A"`) || !strings.Contains(v, `"keywords":["x"]`) {
		t.Errorf("olm.csv.metadata value %s lacks the CSV's fields", v)
	}
	if got := cfg.Bundles[1].Properties[1].Type; got != property.TypeBundleObject {
		t.Errorf("bundle without image was migrated (property %s)", got)
	}

	var nilM *Migrations
	if err := nilM.Migrate(cfg); err != nil {
		t.Errorf("nil migrations: %v", err)
	}

	broken := &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{bundle("quay.io/a:v1")}}
	broken.Bundles[0].CsvJSON = `{"kind":"ClusterServiceVersion","spec":{"version":"not semver"}}`
	if err := m.Migrate(broken); err == nil || !strings.Contains(err.Error(), "migration bundle-object-to-csv-metadata") {
		t.Errorf("error %v, want one naming the migration", err)
	}
}
