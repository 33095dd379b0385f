package config

import (
	"fmt"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"strings"

	"go.yaml.in/yaml/v3"
)

// authKeys are the keys of an auth block (and of Gemini CLI's oauth block, whose camelCase
// spellings are accepted too), each with where its value goes.
func authKeys(a *auth.AuthConfig) map[string]*string {
	return map[string]*string{
		"type":                       &a.Type,
		"client_id":                  &a.ClientID,
		"clientId":                   &a.ClientID,
		"client_secret":              &a.ClientSecret,
		"clientSecret":               &a.ClientSecret,
		"token_endpoint_auth":        &a.TokenEndpointAuth,
		"token_endpoint_auth_method": &a.TokenEndpointAuth,
		"private_key_file":           &a.PrivateKeyFile,
		"signing_alg":                &a.SigningAlg,
		"client_metadata_url":        &a.ClientMetadataURL,
		"dpop":                       &a.DPoP,
		"dpop_alg":                   &a.DPoPAlg,
		"token_file":                 &a.TokenFile,
		"token_env":                  &a.TokenEnv,
		"audience":                   &a.Audience,
		"idp_issuer":                 &a.IdPIssuer,
		"idp_token_endpoint":         &a.IdPTokenEndpoint,
		"idp_client_id":              &a.IdPClientID,
		"idp_client_secret":          &a.IdPClientSecret,
	}
}

// readAuth reads the bridge's auth block, or (from the oauth key) Gemini CLI's oauth block:
// {enabled, clientId, clientSecret, scopes, ...}. Values expand ${VAR}.
func readAuth(p *parser, s *serverState, k, v *yaml.Node) {
	n := deref(v)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(v, "server %q: %s must be a map (type: oauth or client_credentials, ...)", s.id, k.Value)
		return
	}
	a := &auth.AuthConfig{}
	gemini := k.Value == "oauth"
	if gemini {
		a.Type = auth.AuthOAuth
	}
	fields := authKeys(a)
	for _, e := range p.pairs(n, "key") {
		switch dst := fields[e.key]; {
		case e.key == "scopes":
			a.Scopes = p.scopes(s, e.v)
		case e.key == "token_command" && !gemini:
			p.tokenCommand(s, a, e.v)
		case gemini && e.key == "enabled":
			if on, ok := p.boolean(s, e.k, e.v); ok && !on {
				return
			}
		case gemini && (e.key == "authorizationUrl" || e.key == "tokenUrl" || e.key == "audiences" || e.key == "redirectUri" || e.key == "tokenParamName"):
			p.warnf(e.k, "server %q: oauth.%s is ignored: mcpbridge discovers the authorization server", s.id, e.key)
		case dst != nil:
			p.stringField(s, e.k, e.v, k.Value+"."+e.key, dst, true)
		default:
			p.errorf(e.k, "server %q: unknown key %q in %s (want type, scopes, client_id, client_secret, token_endpoint_auth, private_key_file, signing_alg, client_metadata_url, dpop, dpop_alg, token_file, token_env, token_command, audience, idp_issuer, idp_token_endpoint, idp_client_id or idp_client_secret)", s.id, e.key, k.Value)
		}
	}
	switch a.Type {
	case auth.AuthOAuth, auth.AuthClientCredentials, auth.AuthWorkloadIdentity, auth.AuthEnterprise:
	default:
		p.errorf(v, "server %q: %s.type must be %s, %s, %s or %s", s.id, k.Value, auth.AuthOAuth, auth.AuthClientCredentials, auth.AuthWorkloadIdentity, auth.AuthEnterprise)
		return
	}
	s.sc.Auth = a
}

// tokenCommand reads auth.token_command: a list (program and arguments) or one string split
// on white space; no shell either way. Items expand ${VAR}.
func (p *parser) tokenCommand(s *serverState, a *auth.AuthConfig, v *yaml.Node) {
	n := deref(v)
	var items []item
	switch {
	case n != nil && n.Kind == yaml.SequenceNode:
		items = p.stringItems(s, n, "auth.token_command")
	case n != nil && n.Kind == yaml.ScalarNode && !isNull(n):
		for f := range strings.FieldsSeq(n.Value) {
			items = append(items, item{n, f})
		}
	}
	if len(items) == 0 {
		p.errorf(v, "server %q: auth.token_command must be a program and its arguments (a list, or one string)", s.id)
		return
	}
	a.TokenCommand = make([]string, len(items))
	for i, it := range items {
		a.TokenCommand[i] = it.s
		s.fields = append(s.fields, pending{it.n, fmt.Sprintf("auth.token_command[%d]", i), it.s, func(v string) { a.TokenCommand[i] = v }})
	}
}

// scopes reads a list of scopes or one space-separated string.
func (p *parser) scopes(s *serverState, v *yaml.Node) []string {
	n := deref(v)
	if n != nil && n.Kind == yaml.ScalarNode {
		return strings.Fields(n.Value)
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errorf(v, "server %q: scopes must be a list", s.id)
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if str, ok := p.scalar(s, c, "scopes[]"); ok {
			out = append(out, str)
		}
	}
	return out
}
