// The TypeScript SDK 1.x side of integration's BenchmarkVsSDKs: the raw client of
// @modelcontextprotocol/sdk (pinned in integration/package.json) calling "add" on N stdio
// servers (testdata/benchserver), driven by the Go benchmark over stdin/stdout (run.mjs):
//
//   node client.mjs BENCHSERVER N   → prints "ready" once N sessions are up
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serve } from "./run.mjs";

const [bin, nArg] = process.argv.slice(2);
const n = Number(nArg);
const clients = [];
for (let i = 0; i < n; i++) {
  const client = new Client({ name: "ts-raw", version: "1" });
  await client.connect(new StdioClientTransport({ command: bin, args: [], stderr: "ignore" }));
  clients.push(client);
}
await serve(clients, "ready");
