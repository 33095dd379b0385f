package oauth_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ttalk/mcpbridge/internal/oauth"
)

// A client credentials config is checked before a handler is made; an empty token file
// holds no grant.
func Example() {
	_, err := oauth.Prepare(oauth.Config{Type: oauth.TypeClientCredentials})
	fmt.Println(err)
	_, err = oauth.Prepare(oauth.Config{Type: oauth.TypeClientCredentials, ClientID: "bot", ClientSecret: "s3cret"})
	fmt.Println(err)

	dir, _ := os.MkdirTemp("", "oauth-example")
	defer os.RemoveAll(dir)
	grants, err := oauth.ReadFile[oauth.Grant](filepath.Join(dir, "tokens.json"))
	fmt.Println(len(grants), err)
	// Output:
	// auth: client_credentials needs client_id
	// <nil>
	// 0 <nil>
}
