package oauth

import "testing"

func TestUserKeysNeverCollide(t *testing.T) {
	type k struct{ url, client, typ, user string }
	keys := []k{
		{"https://a/mcp", "c", TypeOAuth, ""},
		{"https://a/mcp", "c", TypeOAuth, "alice"},
		{"https://a/mcp", "c", TypeOAuth, "alice\x00"},
		{"https://a/mcp", "c", TypeOAuth, "a"},
		{"https://a/mcp", "c\x00a", TypeOAuth, "lice"},
		{"https://a/mcp", "ca", TypeOAuth, "lice"},
		{"https://a/mcp", "c", TypeOAuth, "\xff\xfe"},
		{"https://a/mcp", "c", TypeOAuth, "../../x"},
		{"https://a/mcp", "", TypeOAuth, "calice"},
		{"https://a/mcpc", "", TypeOAuth, "alice"},
		{"https://b/mcp", "c", TypeOAuth, "alice"},
		{"https://a/mcp", "c", TypeClientCredentials, "alice"},
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
	if UserKey("u", "c", TypeOAuth, "") != Key("u", "c", TypeOAuth) {
		t.Error("the host's own grant must keep its key")
	}
}
