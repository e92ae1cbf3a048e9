import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output is read by shape, and every field read is asserted.
type Json = any;

const root = join(import.meta.dirname, '../..');

/**
 * Runs the MCP Inspector's CLI (`mcp-inspector-cli --cli URL --transport http …`) as a person would, with `headers`
 * as its `--header` arguments: its JSON output parsed (null when it failed), its exit code and stderr.
 */
export function runInspector(
  url: string,
  args: string[],
  headers: Record<string, string>,
): Promise<{ code: number | null; result: Json; stderr: string }> {
  const auth = Object.entries(headers).flatMap(([name, value]) => ['--header', `${name}: ${value}`]);
  const child = spawn(
    join(root, 'node_modules/.bin/mcp-inspector-cli'),
    ['--cli', url, '--transport', 'http', ...args, ...auth],
    {
      // Its package.json is found from the working directory's parent (inspector #839): its own folder has one.
      cwd: join(root, 'node_modules/@modelcontextprotocol/inspector-cli/build'),
      // It starts `node` from PATH: this one.
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, result: code === 0 ? JSON.parse(stdout) : null, stderr }));
  });
}
