package config

import (
	"github.com/ttalk/mcpbridge/bridge/auth"
	"reflect"
	"strings"
	"testing"
)

// Each key of the authorization extensions lands in its auth.AuthConfig field; token_command is a
// list or one string (no shell) and expands ${VAR}; dpop takes YAML booleans too.
func TestAuthExtensionKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lines string
		want  auth.AuthConfig
	}{
		{"{type: workload_identity, token_file: /var/run/secrets/tokens/mcp, audience: https://as.example}",
			auth.AuthConfig{Type: auth.AuthWorkloadIdentity, TokenFile: "/var/run/secrets/tokens/mcp", Audience: "https://as.example"}},
		{"{type: workload_identity, token_env: ACTIONS_ID_TOKEN, dpop: on, dpop_alg: EdDSA}",
			auth.AuthConfig{Type: auth.AuthWorkloadIdentity, TokenEnv: "ACTIONS_ID_TOKEN", DPoP: "on", DPoPAlg: "EdDSA"}},
		{"{type: workload_identity, token_command: [gcloud, auth, print-identity-token, '${AUD}']}",
			auth.AuthConfig{Type: auth.AuthWorkloadIdentity, TokenCommand: []string{"gcloud", "auth", "print-identity-token", "https://as.example"}}},
		{"{type: workload_identity, token_command: 'cat /run/token', dpop: false}",
			auth.AuthConfig{Type: auth.AuthWorkloadIdentity, TokenCommand: []string{"cat", "/run/token"}, DPoP: "false"}},
		{"{type: enterprise, client_id: app, client_secret: s, idp_issuer: https://idp.example, idp_token_endpoint: https://idp.example/t, idp_client_id: i, idp_client_secret: '${IDP_SECRET}', token_file: /t}",
			auth.AuthConfig{Type: auth.AuthEnterprise, ClientID: "app", ClientSecret: "s", IdPIssuer: "https://idp.example", IdPTokenEndpoint: "https://idp.example/t",
				IdPClientID: "i", IdPClientSecret: "idp-s3cret", TokenFile: "/t"}},
		{"{type: oauth, dpop: true}", auth.AuthConfig{Type: auth.AuthOAuth, DPoP: "true"}},
	}
	for _, tt := range tests {
		cf, err := parseConfig([]byte("servers:\n  a:\n    url: https://h/mcp\n    auth: "+tt.lines+"\n"), "x.yaml",
			mapEnv(map[string]string{"AUD": "https://as.example", "IDP_SECRET": "idp-s3cret"}))
		if err != nil || len(cf.Servers) != 1 || len(cf.Warnings) > 0 {
			t.Errorf("%s: %v %+v", tt.lines, err, cf)
			continue
		}
		if got := cf.Servers[0].Auth; got == nil || !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tt.lines, got, &tt.want)
		}
	}
	for _, bad := range []struct{ lines, want string }{
		{"{type: wif}", "auth.type must be oauth, client_credentials, workload_identity or enterprise"},
		{"{type: workload_identity, token_command: []}", "auth.token_command must be a program and its arguments"},
		{"{type: workload_identity, token_file: /t, id_token: x}", `unknown key "id_token"`},
	} {
		_, err := parseConfig([]byte("servers:\n  a:\n    url: https://h/mcp\n    auth: "+bad.lines+"\n"), "x.yaml", mapEnv(nil))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.lines, err, bad.want)
		}
	}
}

// What prints of an auth.AuthConfig names its sources but never its secrets.
func TestAuthConfigStringExtensions(t *testing.T) {
	t.Parallel()
	a := &auth.AuthConfig{Type: auth.AuthEnterprise, ClientID: "app", ClientSecret: "s3cret-1", IdPIssuer: "https://idp.example/tenant",
		IdPClientSecret: "s3cret-2", TokenFile: "/run/id_token", DPoP: "on"}
	for _, s := range []string{a.String(), a.GoString(), a.LogValue().String()} {
		if strings.Contains(s, "s3cret") || !strings.Contains(s, "idp=https://idp.example") || !strings.Contains(s, "token_file=/run/id_token") || !strings.Contains(s, "dpop=on") {
			t.Errorf("%q", s)
		}
	}
	c := &auth.AuthConfig{Type: auth.AuthWorkloadIdentity, TokenCommand: []string{"print-token", "--secret-arg"}}
	if s := c.String(); strings.Contains(s, "--secret-arg") || !strings.Contains(s, "token_command=print-token") {
		t.Errorf("%q", s)
	}
}
