package auth

import "testing"

func TestUserKeysNeverCollide(t *testing.T) {
	type k struct{ url, client, typ, user string }
	keys := []k{
		{"https://a/mcp", "c", AuthOAuth, ""},
		{"https://a/mcp", "c", AuthOAuth, "alice"},
		{"https://a/mcp", "c", AuthOAuth, "alice\x00"},
		{"https://a/mcp", "c", AuthOAuth, "a"},
		{"https://a/mcp", "c\x00a", AuthOAuth, "lice"},
		{"https://a/mcp", "ca", AuthOAuth, "lice"},
		{"https://a/mcp", "c", AuthOAuth, "\xff\xfe"},
		{"https://a/mcp", "c", AuthOAuth, "../../x"},
		{"https://a/mcp", "", AuthOAuth, "calice"},
		{"https://a/mcpc", "", AuthOAuth, "alice"},
		{"https://b/mcp", "c", AuthOAuth, "alice"},
		{"https://a/mcp", "c", AuthClientCredentials, "alice"},
	}
	seen := map[string]k{}
	for _, x := range keys {
		got := UserKey(x.url, x.client, x.typ, x.user)
		if prev, ok := seen[got]; ok {
			t.Errorf("%q and %q share key %s", prev, x, got)
		}
		seen[got] = x
		if got != UserKey(x.url, x.client, x.typ, x.user) {
			t.Errorf("%q: key not stable", x)
		}
	}
	if UserKey("u", "c", AuthOAuth, "") != Key("u", "c", AuthOAuth) {
		t.Error("the host's own grant must keep its key")
	}
}
