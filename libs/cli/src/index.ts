/** `@flowline/cli`: the `flowline` command line; `main(argv, io)` for in-process use. */
export { main } from './main';
export { EXIT, type CliIo, type ExitCode } from './io';
export { DEFAULT_URL } from './session';
