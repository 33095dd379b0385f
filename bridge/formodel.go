package bridge

import (
	"errors"

	"github.com/ttalk/mcpbridge/results"
)

// ForModel sorts the outcome of a Handler call (text, err) for an agent framework whose
// tool interface stops the run on any error (Eino, Genkit, langchaingo): a failure the
// model can act on becomes text with a nil error, so the run goes on and the model reads
// it; every other error is returned unchanged, for the framework to stop on.
//
// Text for the model, nil error:
//   - a tool's own failure (*results.ToolError): the tool's flattened text;
//   - arguments that do not match the schema (ErrInvalidArguments): "error: " and the reason;
//   - a BeforeCall denial (ErrDenied): "tool call denied: <reason>";
//   - a tool the server does not offer (ErrUnknownTool, ErrToolGone): "error: " and why.
//
// Returned as is: transport and protocol failures (*ServerError of any other cause), a
// closed server (ErrServerClosed), and the call's context ending.
func ForModel(text string, err error) (string, error) {
	if err == nil {
		return text, nil
	}
	var te *results.ToolError
	switch {
	case errors.As(err, &te):
		if text == "" {
			text = te.Text
		}
		return text, nil
	case errors.Is(err, ErrDenied):
		var d *DeniedError
		if errors.As(err, &d) {
			return d.Error(), nil
		}
		return err.Error(), nil
	case errors.Is(err, ErrInvalidArguments), errors.Is(err, ErrUnknownTool), errors.Is(err, ErrToolGone):
		return "error: " + err.Error(), nil
	}
	return "", err
}
