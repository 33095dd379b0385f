package dpop_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ttalk/mcpbridge/internal/dpop"
)

// A proof for a request that presents an access token: the DPoP header's JWT names the
// method and the URL without its query, and hashes the token.
func ExampleKey_Proof() {
	key, err := dpop.NewKey(dpop.ES256)
	if err != nil {
		panic(err)
	}
	proof, err := key.Proof(http.MethodPost, "https://mcp.example.com/mcp?session=secret", time.Now(), "the-access-token", "")
	if err != nil {
		panic(err)
	}
	var header struct {
		Typ string `json:"typ"`
		Alg string `json:"alg"`
	}
	var claims struct {
		HTM string `json:"htm"`
		HTU string `json:"htu"`
		ATH string `json:"ath"`
	}
	parts := strings.Split(proof, ".")
	for i, v := range []any{&header, &claims} {
		b, _ := base64.RawURLEncoding.DecodeString(parts[i])
		_ = json.Unmarshal(b, v)
	}
	fmt.Println(header.Typ, header.Alg, claims.HTM, claims.HTU, claims.ATH != "")
	// Output: dpop+jwt ES256 POST https://mcp.example.com/mcp true
}
