// The TypeScript SDK side of integration's BenchmarkVsSDKs: the raw client of
// @modelcontextprotocol/sdk (pinned in integration/package.json) calling "add" on N stdio
// servers (testdata/benchserver), driven by the Go benchmark over stdin/stdout:
//
//   node client.mjs BENCHSERVER N   → prints "ready" once N sessions are up
//   "seq CALLS" / "par CALLS WIDTH" → runs the calls, round-robin over the servers, and
//                                     prints "ok NANOSECONDS" (or "error MESSAGE")
//   stdin EOF                       → closes every session and exits
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createInterface } from "node:readline";

const [bin, nArg] = process.argv.slice(2);
const n = Number(nArg);
const clients = [];
for (let i = 0; i < n; i++) {
  const client = new Client({ name: "ts-raw", version: "1" });
  await client.connect(new StdioClientTransport({ command: bin, args: [], stderr: "ignore" }));
  clients.push(client);
}

let next = 0;
async function call() {
  const client = clients[next++ % clients.length];
  const res = await client.callTool({ name: "add", arguments: { a: 40, b: 2 } });
  if (res.isError || res.content.length !== 1 || res.content[0].text !== "42") {
    throw new Error("unexpected result " + JSON.stringify(res));
  }
}

async function run(calls, width) {
  let left = calls;
  const worker = async () => {
    while (left > 0) {
      left--;
      await call();
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: width }, worker));
  return process.hrtime.bigint() - start;
}

process.stdout.write("ready\n");
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const [cmd, callsArg, widthArg] = line.trim().split(/\s+/);
  try {
    const ns = await run(Number(callsArg), cmd === "seq" ? 1 : Number(widthArg));
    process.stdout.write(`ok ${ns}\n`);
  } catch (e) {
    process.stdout.write(`error ${String(e?.message ?? e).replace(/\s+/g, " ")}\n`);
  }
}
await Promise.all(clients.map((c) => c.close()));
