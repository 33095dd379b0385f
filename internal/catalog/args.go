package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// Arguments checks a call's arguments in (as the caller gave them) against t, within ctx
// (the call's deadline): empty input becomes {}, anything but an object is refused, with
// dropNulls (a model's call) a null the schema lets go is dropped, and the rest is validated
// (Validate). It returns the arguments to send.
func (t *Tool) Arguments(ctx context.Context, in json.RawMessage, dropNulls bool, log *slog.Logger) (args json.RawMessage, broken, err error) {
	a, err := schemaguard.NormalizeArgs(in)
	if err != nil {
		return nil, nil, err
	}
	if dropNulls {
		var dropped []string
		if a, dropped = t.Nulls.Drop(t.Schema, a); len(dropped) > 0 {
			log.Debug("null arguments for optional properties dropped", "tool", t.Name, "properties", dropped)
		}
	}
	if broken, err = t.Validate(ctx, a, log); err != nil {
		return nil, nil, err
	}
	return a, broken, nil
}

// Validate validates a call's arguments against t's inputSchema, within the work budget and
// ctx. Arguments over the budget are passed on unvalidated (the server validates them), with
// a debug log. broken is the error of an inputSchema found not to compile on first use (the
// listing's deadline left no time to compile it then): the arguments pass unvalidated, and
// the caller reports it (once).
func (t *Tool) Validate(ctx context.Context, args json.RawMessage, log *slog.Logger) (broken, err error) {
	if t.Validator == nil {
		return nil, nil
	}
	err = t.Validator.ValidateJSON(ctx, args)
	switch {
	case errors.Is(err, schemaguard.ErrValidationSkipped):
		log.Debug("arguments not validated", "tool", t.Name, "reason", err)
		return nil, nil
	case errors.Is(err, schemaguard.ErrNotCompiled):
		return err, nil
	}
	return nil, err
}
