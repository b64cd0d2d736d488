/**
 * Reading the repository's Markdown: its links, its anchors (GitHub's heading slugs plus
 * explicit `<a id>`s) and its fenced code blocks, through marked's lexer.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';

/** The repository root (this file is scripts/docs/…). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** README.md and every Markdown file under docs/, repository-relative. */
export function userDocs(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(REPO_ROOT, dir)).sort()) {
      const rel = `${dir}/${name}`;
      if (statSync(join(REPO_ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out;
}

function walkTokens(tokens: readonly Token[], visit: (t: Token) => void): void {
  for (const t of tokens) {
    visit(t);
    const nested = t as { tokens?: Token[]; items?: Token[]; rows?: Array<Array<{ tokens: Token[] }>>; header?: Array<{ tokens: Token[] }> };
    if (nested.tokens) walkTokens(nested.tokens, visit);
    if (nested.items) walkTokens(nested.items, visit);
    if (nested.header) for (const c of nested.header) walkTokens(c.tokens, visit);
    if (nested.rows) for (const row of nested.rows) for (const c of row) walkTokens(c.tokens, visit);
  }
}

export interface MarkdownFacts {
  links: string[];
  anchors: Set<string>;
  code: Array<{ lang: string; text: string }>;
}

const cache = new Map<string, MarkdownFacts>();

/** Links, anchors and code blocks of one file (repository-relative path). */
export function readMarkdown(file: string): MarkdownFacts {
  const hit = cache.get(file);
  if (hit) return hit;
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const slugger = new GithubSlugger();
  const facts: MarkdownFacts = { links: [], anchors: new Set(), code: [] };
  walkTokens(new Lexer({ gfm: true }).lex(text), (t) => {
    if (t.type === 'heading') facts.anchors.add(slugger.slug((t as Tokens.Heading).text.replace(/<[^>]+>/g, '').replace(/`/g, '')));
    else if (t.type === 'link' || t.type === 'image') facts.links.push((t as Tokens.Link).href);
    else if (t.type === 'code') facts.code.push({ lang: (t as Tokens.Code).lang ?? '', text: (t as Tokens.Code).text });
    if (t.type === 'html' || t.type === 'heading' || t.type === 'paragraph') {
      for (const m of t.raw.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) facts.anchors.add(m[1]!);
    }
  });
  cache.set(file, facts);
  return facts;
}

/**
 * Every problem with the links of `files`: a link that leaves the repository (other than an
 * http(s) address), a missing target, or an anchor its target does not have.
 */
export function linkProblems(files: readonly string[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    for (const href of readMarkdown(file).links) {
      if (/^https?:\/\//i.test(href)) continue;
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) {
        problems.push(`${file}: ${href} is neither an http(s) address nor a path in the repository`);
        continue;
      }
      const [pathPart = '', anchor] = href.split('#', 2) as [string, string | undefined];
      const target = pathPart === '' ? join(REPO_ROOT, file) : resolve(join(REPO_ROOT, dirname(file)), decodeURI(pathPart));
      const rel = relative(REPO_ROOT, target);
      if (rel.startsWith('..') || rel.startsWith(sep) || pathPart.startsWith('/')) {
        problems.push(`${file}: ${href} points outside the repository`);
        continue;
      }
      let exists = true;
      try {
        statSync(target);
      } catch {
        exists = false;
      }
      if (!exists) {
        problems.push(`${file}: ${href} names a missing file (${rel})`);
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (!rel.endsWith('.md')) continue;
        if (!readMarkdown(rel.split(sep).join('/')).anchors.has(decodeURIComponent(anchor))) {
          problems.push(`${file}: ${href} names an anchor ${rel} does not have`);
        }
      }
    }
  }
  return problems;
}

/** The fenced blocks of one language in a file, in order. */
export function codeBlocks(file: string, lang: string): string[] {
  return readMarkdown(file)
    .code.filter((c) => c.lang.split(/\s+/)[0] === lang)
    .map((c) => c.text);
}
