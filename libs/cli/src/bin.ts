/** The `flowline` process: the real argv, stdout, stderr and environment handed to `main`. */
import { main } from './main';

process.exitCode = await main(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  env: process.env,
});
