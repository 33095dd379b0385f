// Captures tools/list of npm MCP servers that no tuning of package toolsearch used, into
// unseen.json (the second server set of the held-out evaluation, eval-heldout.json).
// Every server starts with placeholder credentials: only tools/list is asked, nothing is
// called. Run from a directory where the packages below are installed (npm i
// --ignore-scripts <package>@<version> ... @modelcontextprotocol/sdk):
//
//	node capture-unseen.mjs > unseen.json
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";

const fake = "placeholder-not-a-credential";
const servers = [
  { id: "filesystem", pkg: "@modelcontextprotocol/server-filesystem", args: [tmpdir()] },
  { id: "memory", pkg: "@modelcontextprotocol/server-memory" },
  { id: "git", pkg: "@cyanheads/git-mcp-server" },
  { id: "mongodb", pkg: "mongodb-mcp-server" },
  { id: "chart", pkg: "@antv/mcp-server-chart" },
  { id: "netlify", pkg: "@netlify/mcp" },
  { id: "airtable", pkg: "airtable-mcp-server", env: { AIRTABLE_API_KEY: fake } },
  { id: "postgres", pkg: "@modelcontextprotocol/server-postgres", args: ["postgresql://127.0.0.1:1/none"] },
  { id: "datadog", pkg: "@winor30/mcp-server-datadog", env: { DATADOG_API_KEY: fake, DATADOG_APP_KEY: fake } },
  { id: "jira", pkg: "@aashari/mcp-server-atlassian-jira", env: { ATLASSIAN_SITE_NAME: "example", ATLASSIAN_USER_EMAIL: "a@example.com", ATLASSIAN_API_TOKEN: fake } },
  { id: "trello", pkg: "@delorenj/mcp-server-trello", env: { TRELLO_API_KEY: fake, TRELLO_TOKEN: fake, TRELLO_BOARD_ID: "0" } },
  { id: "pinecone", pkg: "@pinecone-database/mcp" },
  { id: "shopify-dev", pkg: "@shopify/dev-mcp" },
];

function bin(pkg) {
  const meta = JSON.parse(readFileSync(`node_modules/${pkg}/package.json`, "utf8"));
  const b = typeof meta.bin === "string" ? meta.bin : Object.values(meta.bin ?? {})[0];
  return { path: `node_modules/${pkg}/${b}`, version: meta.version };
}

const out = { source: "tools/list of npm MCP servers outside the tuning set, captured by capture-unseen.mjs with placeholder credentials; HELD OUT: never tune package toolsearch on it", servers: [] };
for (const s of servers) {
  let client;
  try {
    const { path, version } = bin(s.pkg);
    const transport = new StdioClientTransport({ command: "node", args: [path, ...(s.args ?? [])], env: { PATH: process.env.PATH, HOME: tmpdir(), ...(s.env ?? {}) }, stderr: "ignore" });
    client = new Client({ name: "capture", version: "0" });
    await Promise.race([client.connect(transport), new Promise((_, no) => setTimeout(() => no(new Error("connect timeout")), 20000))]);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools.map((t) => ({ name: t.name, ...(t.title ? { title: t.title } : {}), description: t.description ?? "", inputSchema: t.inputSchema })));
      cursor = page.nextCursor;
    } while (cursor);
    const info = client.getServerVersion() ?? {};
    out.servers.push({ id: s.id, package: s.pkg, version, serverName: info.name ?? "", instructions: client.getInstructions() ?? "", tools });
    console.error(`${s.id}: ${tools.length} tools`);
  } catch (e) {
    console.error(`${s.id}: skipped: ${e.message}`);
  } finally {
    await client?.close().catch(() => {});
  }
}
console.log(JSON.stringify(out, null, 1));
process.exit(0);
