package grant_test

import (
	"encoding/base64"
	"fmt"

	"github.com/ttalk/mcpbridge/internal/grant"
)

// Peek explains a token without verifying it: whom it is for and until when.
func ExamplePeek() {
	enc := base64.RawURLEncoding.EncodeToString
	token := enc([]byte(`{"alg":"ES256","typ":"JWT"}`)) + "." +
		enc([]byte(`{"iss":"https://ci.example","aud":"https://as.example","exp":1800000000}`)) + ".c2ln"
	c, err := grant.Peek(token)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Issuer, c.Audience, c.Expiry.UTC().Format("2006-01-02"), grant.HasAudience(c.Audience, "https://as.example/"))
	// Output: https://ci.example [https://as.example] 2027-01-15 true
}
