package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// worstShapes are servers files of the shapes that cost a YAML parser most, each grown to
// about size bytes: many small servers, aliases and merge keys (each server merging one
// anchored base), nested merge keys (a merge-key bomb), deep flow nesting, and long scalars.
func worstShapes(size int) map[string][]byte {
	grow := func(head string, each func(i int) string) []byte {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; b.Len() < size; i++ {
			b.WriteString(each(i))
		}
		return []byte(b.String())
	}
	return map[string][]byte{
		"servers": grow("servers:\n", func(i int) string {
			return fmt.Sprintf("  s%06d:\n    command: npx\n    args: [\"-y\", \"@scope/server-%d\"]\n    env: {TOKEN: \"${TOKEN_%d:-x}\"}\n", i, i, i)
		}),
		"merge keys": grow("x-base: &base {command: npx, args: [\"-y\", \"pkg\"], env: {A: b}}\nservers:\n", func(i int) string {
			return fmt.Sprintf("  s%06d: {<<: *base, cwd: /tmp}\n", i)
		}),
		"merge bomb": grow("x-0: &m0 {a: 1, b: 2}\n", func(i int) string {
			if i > 40 {
				return fmt.Sprintf("x-%d: {<<: [*m%d, *m%d, *m%d, *m%d]}\n", i+1, i%40, i%40, i%40, i%40)
			}
			return fmt.Sprintf("x-%d: &m%d {<<: [*m%d, *m%d, *m%d, *m%d]}\n", i+1, i+1, i, i, i, i)
		}),
		"aliases": grow("x-args: &args [\"-y\", \"pkg\", \"--flag\", \"value\"]\nservers:\n", func(i int) string {
			return fmt.Sprintf("  s%06d: {command: npx, args: *args}\n", i)
		}),
		"deep nesting": []byte("servers:\n  s:\n    command: npx\n    args: " + strings.Repeat("[", size/4) + strings.Repeat("]", size/4) + "\n"),
		"long scalars": grow("servers:\n", func(i int) string {
			return fmt.Sprintf("  s%d:\n    command: %s\n", i, strings.Repeat("x", 64<<10))
		}),
	}
}

// BenchmarkParseWorstShapes parses each worst shape at 1, 2, 4 and 8 MiB (refusal counts:
// a file over a limit must be refused as fast as a good one is parsed) and reports ns per
// input byte, which stays flat when parsing is linear in the file size. The target: under 2 s
// for every 8 MiB shape on the 2-core machine.
//
//	go test ./bridge/config -run '^$' -bench ParseWorstShapes -benchtime 1x
func BenchmarkParseWorstShapes(b *testing.B) {
	lookup := func(string) (string, bool) { return "", false }
	for _, mib := range []int{1, 2, 4, 8} {
		size := mib<<20 - 1024
		shapes := worstShapes(size)
		for _, name := range []string{"servers", "merge keys", "merge bomb", "aliases", "deep nesting", "long scalars"} {
			data := shapes[name]
			b.Run(fmt.Sprintf("%s/%dMiB", strings.ReplaceAll(name, " ", "_"), mib), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				start := time.Now()
				for b.Loop() {
					_, _ = parseConfig(data, "servers.yaml", lookup)
				}
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(len(data)), "ns/B")
			})
		}
	}
}
