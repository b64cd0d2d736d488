/** The generated documentation pages and what writes each. */
import { renderGraphReference } from './graph-reference';
import { renderOptionsReference } from './options-reference';
import { renderRestReference } from './rest-reference';

export interface GeneratedPage {
  /** repository-relative path */
  path: string;
  render(): Promise<string>;
}

export const GENERATED_PAGES: readonly GeneratedPage[] = [
  { path: 'docs/reference/graph.md', render: renderGraphReference },
  { path: 'docs/reference/options.md', render: async () => renderOptionsReference() },
  { path: 'docs/reference/rest-api.md', render: renderRestReference },
];

/** The one command that regenerates them; staleness messages name it. */
export const DOCS_GEN_COMMAND = 'npm run docs:gen';
