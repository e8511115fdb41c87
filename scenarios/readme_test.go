package scenarios

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMESchema keeps the schema table of README.md complete: every key
// the loader reads is documented there.
func TestREADMESchema(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	doc := string(readme)
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				assert.Contains(t, doc, "**["+prefix+key+"]**", "README schema lacks the table [%s%s]", prefix, key)
				walk(prefix+key+".", ft)
				continue
			}
			assert.Contains(t, doc, "`"+key+"`", "README schema lacks the key %s%s", prefix, key)
		}
	}
	walk("", reflect.TypeOf(raw{}))
}

// TestSimKeys: every field that sim and model name in their errors maps
// to a key (or table) the loader reads, so that scenario errors keep
// their file:line: key: form.
func TestSimKeys(t *testing.T) {
	keys := map[string]bool{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			key := prefix + strings.Split(f.Tag.Get("toml"), ",")[0]
			keys[key] = true
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(key+".", ft)
			}
		}
	}
	walk("", reflect.TypeOf(raw{}))
	for field, key := range simKeys {
		assert.True(t, keys[key], "sim field %s maps to %q, which the loader does not read", field, key)
	}
}
