/**
 * The samples the editor's "Start from" offers: the repository's `scripts/samples/*.json`
 * (the ones `npm start` seeds), bundled into the editor's chunk at build time. Picking one
 * copies its graph into a new, unsaved definition with no link back to the file.
 */
export interface Sample {
  /** file name without `.json` */
  id: string;
  name: string;
  description: string;
  graph: unknown;
}

const files = import.meta.glob<{ name: string; description?: string; graph: unknown }>('../../../../scripts/samples/*.json', {
  eager: true,
  import: 'default',
});

/** Every sample, by name. */
export const SAMPLES: Sample[] = Object.entries(files)
  .map(([path, s]) => ({ id: path.replace(/^.*\//, '').replace(/\.json$/, ''), name: s.name, description: s.description ?? '', graph: s.graph }))
  .sort((a, b) => a.name.localeCompare(b.name));
