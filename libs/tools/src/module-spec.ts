/**
 * Loading a deployment's own module named by an option (TOOL_MODULES, ATTACHMENT_RESOLVER_MODULE):
 * a path relative to the process's working directory, an absolute path, or a package name.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Imports the module `spec` names; a module that fails to load rejects with `onError(cause)`,
 * so the caller's error names its option.
 */
export async function importModuleSpec<T>(spec: string, onError: (cause: unknown) => Error): Promise<T> {
  const target = spec.startsWith('.') || isAbsolute(spec) ? pathToFileURL(resolve(spec)).href : spec;
  try {
    return (await import(target)) as T;
  } catch (cause) {
    throw onError(cause);
  }
}
