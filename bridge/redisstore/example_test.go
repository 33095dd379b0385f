package redisstore_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/redisstore"
)

// Replicas of a web host share their users' grants through Redis. The AES keys come from
// the host's secret manager (here: environment variables holding base64); to rotate, add a
// new key as Current and keep the old one in Keys until every grant was saved again.
func Example() {
	k1, _ := base64.StdEncoding.DecodeString(os.Getenv("TOKEN_KEY_2025"))
	k2, _ := base64.StdEncoding.DecodeString(os.Getenv("TOKEN_KEY_2026"))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store, err := redisstore.New(redisstore.Options{
		Client:  rdb,
		Keys:    map[string][]byte{"2025": k1, "2026": k2},
		Current: "2026",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := bridge.Connect(context.Background(), nil, &bridge.Options{
		TokenStore: store, // a TokenLocker (one refresh across replicas) and a LoginRelay (callbacks on any replica)
		Users:      &bridge.UserOptions{RedirectURL: "https://app.example/oauth/callback"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
}
