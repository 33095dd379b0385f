package auth_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ttalk/mcpbridge/bridge/auth"
)

// A client credentials config is checked before a handler is made; an empty token file
// holds no grant.
func Example() {
	_, err := auth.Prepare(auth.AuthConfig{Type: auth.AuthClientCredentials})
	fmt.Println(err)
	_, err = auth.Prepare(auth.AuthConfig{Type: auth.AuthClientCredentials, ClientID: "bot", ClientSecret: "s3cret"})
	fmt.Println(err)

	dir, _ := os.MkdirTemp("", "oauth-example")
	defer os.RemoveAll(dir)
	grants, err := auth.ReadFile[auth.StoredToken](filepath.Join(dir, "tokens.json"))
	fmt.Println(len(grants), err)
	// Output:
	// auth: client_credentials needs client_id
	// <nil>
	// 0 <nil>
}
