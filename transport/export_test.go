package transport

// Test-only views of a Conn's process; bridge has no use for them.

func (c *Conn) Kind() Kind              { return c.kind }
func (c *Conn) Exited() <-chan struct{} { return c.exitedCh() }
func (c *Conn) ExitError() error        { return c.exitErr() }
func (c *Conn) PID() int                { return c.pid() }

// Test-only names for errors the package no longer exports.
type (
	BudgetError = budgetError
	ProcessEnd  = processEnd
)
