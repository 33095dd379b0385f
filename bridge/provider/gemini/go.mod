module github.com/ttalk/mcpbridge/bridge/provider/gemini

go 1.25.0

require github.com/ttalk/mcpbridge v0.0.0-00010101000000-000000000000

replace github.com/ttalk/mcpbridge => ../../..
