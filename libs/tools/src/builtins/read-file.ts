/**
 * `read_file`: reads a UTF-8 file inside TOOL_FILES_ROOT. No escape: absolute paths,
 * `..` segments and NUL bytes are refused outright, and the real path (symlinks
 * resolved) must stay inside the real root. The file is opened with O_NOFOLLOW and
 * checked to be the same inode that was vetted, so a swap after the check is refused.
 */
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { throwIfAborted, toolFailed, toolInvalid } from '../tool-error';
import type { ToolDefinition } from '../tool-definition';

/** Largest file `read_file` returns. */
export const DEFAULT_MAX_FILE_BYTES = 1_048_576;

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Resolves `path` to a real path inside `root`, or throws ValidationFailed. */
export async function resolveInsideRoot(root: string, path: string): Promise<string> {
  if (path.length === 0 || path.includes('\0')) throw toolInvalid('read_file: path must be a non-empty relative path');
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path)) throw toolInvalid('read_file: absolute paths are refused');
  if (path.split(/[\\/]/).some((segment) => segment === '..')) throw toolInvalid('read_file: ".." segments are refused');
  const realRoot = await realpath(root).catch((cause: unknown) => {
    throw toolFailed('read_file: TOOL_FILES_ROOT is not readable', cause);
  });
  const candidate = resolve(realRoot, path);
  const real = await realpath(candidate).catch((cause: unknown) => {
    throw toolInvalid('read_file: no such file inside the files root', cause);
  });
  if (!isInside(realRoot, real)) throw toolInvalid('read_file: the path leaves the files root');
  return real;
}

/** Builds `read_file` with a size cap. */
export function createReadFileTool(maxFileBytes: number = DEFAULT_MAX_FILE_BYTES): ToolDefinition {
  return {
    name: 'read_file',
    description: 'Reads a UTF-8 text file by its path relative to the deployment files root; returns { path, content, sizeBytes }.',
    argumentsSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1, maxLength: 1024 } },
      required: ['path'],
      additionalProperties: false,
    },
    requiresAllowedUrls: false,
    run: async (args, ctx) => {
      if (ctx.filesRoot === null) throw toolInvalid('read_file: no files root is configured (TOOL_FILES_ROOT)');
      const path = args.path as string;
      const real = await resolveInsideRoot(ctx.filesRoot, path);
      throwIfAborted(ctx.signal);
      const vetted = await stat(real);
      if (!vetted.isFile()) throw toolInvalid('read_file: the path is not a regular file');
      if (vetted.size > maxFileBytes) throw toolInvalid(`read_file: the file exceeds ${maxFileBytes} bytes`);
      const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW).catch((cause: unknown) => {
        throw toolFailed('read_file: the file could not be opened', cause);
      });
      try {
        const opened = await handle.stat();
        if (opened.ino !== vetted.ino || opened.dev !== vetted.dev) throw toolFailed('read_file: the file changed while it was opened');
        const buffer = await handle.readFile({ signal: ctx.signal });
        if (buffer.byteLength > maxFileBytes) throw toolInvalid(`read_file: the file exceeds ${maxFileBytes} bytes`);
        return { path, content: buffer.toString('utf8'), sizeBytes: buffer.byteLength };
      } finally {
        await handle.close();
      }
    },
  };
}
