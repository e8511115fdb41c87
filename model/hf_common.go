package model

// Steps shared by the family importers (hf_<family>.go). Each family keeps
// its own raw struct mirroring its config.json; these helpers hold the
// conversion steps whose logic is the same for all of them.

// decodeFamily sets the family's key renames on d (so that errors name the
// family's keys) and decodes d into the family's raw struct T.
func decodeFamily[T any](d *doc, rename map[string]string) (*T, error) {
	d.rename = rename
	var h T
	if err := d.decode(&h); err != nil {
		return nil, err
	}
	return &h, nil
}

// finishFamily ends every import: the checkpoint dtype (torch_dtype, or
// dtype), the dimension checks (errors positioned at the family's keys),
// then the storage formats from quantization_config q for the modules
// mods names. mods runs only once the dimensions are valid (it walks the
// layers).
func finishFamily(d *doc, c *Config, torchDtype, dtypeField string, q *hfQuant, mods func() modules) (*Config, error) {
	base, err := hfDtype(d, c, torchDtype, dtypeField)
	if err != nil {
		return nil, err
	}
	if err := c.validateDims(); err != nil {
		return nil, d.fieldErr(err)
	}
	if err := applyQuant(d.quantDoc(), c, q, mods(), base); err != nil {
		return nil, err
	}
	return c, nil
}
