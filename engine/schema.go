package engine

import (
	"embed"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// SchemaDocument returns the canonical JSON Schema of a schema version
// ("1.0" or "2.0"), as `treelang schema` prints it.
func SchemaDocument(version string) ([]byte, error) {
	switch version {
	case "", "1.0":
		return schemaFiles.ReadFile("schemas/treelang-1.0.schema.json")
	case "2.0":
		return schemaFiles.ReadFile("schemas/treelang-2.0.schema.json")
	}
	return nil, Errorf(ValueError, "unknown schema version %q (expected 1.0 or 2.0)", version)
}
