package wire

import (
	"context"
	"sync/atomic"
)

// Delivery records whether a request reached a server that took it: a Streamable HTTP POST
// made with a context of WithDelivery that the server answered 2xx (transport's round
// tripper calls Accepted). A session that fails afterwards, even with "session not found"
// (go-sdk's reconnecting GET answered 404 after the server restarted), failed a request the
// server may have run, so it is not sent again.
type Delivery struct{ accepted atomic.Bool }

type deliveryKey struct{}

// WithDelivery returns ctx carrying a new Delivery, and the Delivery.
func WithDelivery(ctx context.Context) (context.Context, *Delivery) {
	d := &Delivery{}
	return context.WithValue(ctx, deliveryKey{}, d), d
}

// Accepted records on ctx's Delivery, if it has one, that the server took its request.
func Accepted(ctx context.Context) {
	if d, _ := ctx.Value(deliveryKey{}).(*Delivery); d != nil {
		d.accepted.Store(true)
	}
}

// Taken reports whether a request made with d's context was taken by the server; false for
// a nil d.
func (d *Delivery) Taken() bool { return d != nil && d.accepted.Load() }
