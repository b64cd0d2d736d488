/**
 * Flowline's MCP client (the toolbox the workers use) as a client under test of the MCP
 * conformance suite (`@modelcontextprotocol/conformance client --command …`): the suite starts
 * a scenario's server, appends its URL to the command and names the scenario in
 * MCP_CONFORMANCE_SCENARIO. `conformance.int.test.ts` runs it; by hand, from the repository's root:
 *
 *   npx conformance client --command "node --import tsx tests/integration/mcp/conformance-client.ts" --scenario tools_call
 *
 * Scenarios: `initialize` (connect and list), `tools_call` (call `add_numbers`), `sse-retry`
 * (a call whose stream the server closes, answered after the client reconnects).
 */
import { createMcpToolbox, parseAllowedHosts, type McpServerSpec } from '@flowline/tools';

const url = process.argv.at(-1) ?? '';
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';
const spec: McpServerSpec = { name: 'conf', transport: 'streamable-http', url, headers: {}, allowedTools: null, timeoutMs: 20_000, version: 1 };
// the suite's servers listen on localhost: a deployment would list it in MCP_ALLOWED_HOSTS
const toolbox = createMcpToolbox({ resolve: async () => spec, allowedHosts: parseAllowedHosts('localhost,127.0.0.1,::1') });
const signal = new AbortController().signal;

try {
  const tools = await toolbox.expand('conformance', 'mcp:conf/*', signal);
  process.stdout.write(`listed: ${tools.map((t) => t.name).join(', ')}\n`);
  if (scenario === 'tools_call') {
    process.stdout.write(`${JSON.stringify(await toolbox.call('conformance', 'mcp:conf/add_numbers', { a: 2, b: 3 }, { signal }))}\n`);
  } else if (scenario === 'sse-retry') {
    process.stdout.write(`${JSON.stringify(await toolbox.call('conformance', 'mcp:conf/test_reconnection', {}, { signal }))}\n`);
  }
} catch (err) {
  process.stderr.write(`${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await toolbox.close();
}
