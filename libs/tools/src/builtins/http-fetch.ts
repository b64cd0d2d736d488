/**
 * `http_fetch` (GET only). Every hop — the first URL and each redirect target — must
 * match the node's `allowedUrls` and, unless `allowPrivate`, must not reach a private
 * address: an IP literal is checked directly, a host name is resolved with every
 * address checked, and the connection goes to the checked addresses (the check sits
 * in the socket's `lookup`, so a DNS answer cannot change between check and connect).
 * The body is capped; the invocation's signal and a per-request timeout bound it.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { parseJson, type Json, type JsonObject } from '@flowline/graph';
import { ToolError, abortError, toolFailed, toolInvalid } from '../tool-error';
import type { ToolDefinition } from '../tool-definition';
import { isPrivateAddress, isUrlAllowed, normalizeAllowedUrls } from './address-policy';

export interface HttpFetchOptions {
  /** HTTP_FETCH_ALLOW_PRIVATE=1: skip the private-address check. @default false */
  allowPrivate?: boolean;
  /** body cap in bytes. @default 1048576 */
  maxResponseBytes?: number;
  /** per-hop timeout. @default 30000 */
  timeoutMs?: number;
  /** redirects followed before failing. @default 5 */
  maxRedirects?: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A socket lookup that resolves every address and refuses the host when any is private. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    if (addresses.length === 0 || addresses.some((a) => isPrivateAddress(a.address))) {
      return callback(toolInvalid(`http_fetch: ${hostname} resolves to a private address`), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
};

interface Hop {
  status: number;
  location: string | null;
  contentType: string | null;
  body: Buffer | null;
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

async function readCapped(res: IncomingMessage, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > cap) {
      res.destroy();
      throw toolFailed(`http_fetch: the response body exceeds ${cap} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function requestOnce(url: URL, signal: AbortSignal, allowPrivate: boolean, cap: number, idempotencyKey: string | null): Promise<Hop> {
  const host = unbracket(url.hostname);
  if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
    return Promise.reject(toolInvalid(`http_fetch: ${host} is a private address`));
  }
  const options: RequestOptions = {
    method: 'GET',
    signal,
    headers: {
      'accept-encoding': 'identity',
      'user-agent': 'flowline-http-fetch/1',
      ...(idempotencyKey !== null ? { 'idempotency-key': idempotencyKey } : {}),
    },
    ...(allowPrivate ? {} : { lookup: guardedLookup }),
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Hop>((resolve, reject) => {
    const req = send(url, options, (res) => {
      const status = res.statusCode ?? 0;
      const location = typeof res.headers.location === 'string' ? res.headers.location : null;
      const contentType = res.headers['content-type'] ?? null;
      if (REDIRECT_STATUSES.has(status) && location !== null) {
        res.resume();
        resolve({ status, location, contentType, body: null });
        return;
      }
      readCapped(res, cap).then((body) => resolve({ status, location, contentType, body }), reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function toResult(url: URL, hop: Hop): JsonObject {
  const body = (hop.body ?? Buffer.alloc(0)).toString('utf8');
  const result: JsonObject = { url: url.href, status: hop.status, contentType: hop.contentType, body };
  if (hop.contentType !== null && /[/+]json\b/i.test(hop.contentType)) {
    try {
      result.json = parseJson(body) as Json;
    } catch {
      // not JSON after all: `body` carries the text
    }
  }
  return result;
}

/** Builds `http_fetch` with the deployment's network policy. */
export function createHttpFetchTool(options: HttpFetchOptions = {}): ToolDefinition {
  const allowPrivate = options.allowPrivate ?? false;
  const cap = options.maxResponseBytes ?? 1_048_576;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  return {
    name: 'http_fetch',
    description:
      'HTTP GET of a URL under one of the node\'s allowedUrls prefixes; returns { url, status, contentType, body, json? }. ' +
      'Redirects are followed only to allowed URLs; 5xx and 429 answers fail the attempt (retryable). ' +
      'With sendIdempotencyKey: true every hop carries the header Idempotency-Key: <runId>:<nodeKey>, the same on every retry of the node.',
    argumentsSchema: {
      type: 'object',
      properties: {
        url: { type: 'string', minLength: 1, maxLength: 8192 },
        method: { type: 'string', enum: ['GET'] },
        sendIdempotencyKey: { type: 'boolean' },
      },
      required: ['url'],
      additionalProperties: false,
    },
    requiresAllowedUrls: true,
    run: async (args, ctx) => {
      const prefixes = normalizeAllowedUrls(ctx.allowedUrls);
      // only when the node asks: a server that does not know the header must not see it
      const idempotencyKey = args.sendIdempotencyKey === true ? ctx.idempotencyKey : null;
      let url: URL;
      try {
        url = new URL(args.url as string);
      } catch {
        throw toolInvalid('http_fetch: url is not an absolute URL');
      }
      for (let hop = 0; ; hop += 1) {
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw toolInvalid('http_fetch: only http(s) URLs are fetched');
        if (!isUrlAllowed(url, prefixes)) {
          throw toolInvalid(hop === 0 ? 'http_fetch: url is not under allowedUrls' : 'http_fetch: a redirect leads outside allowedUrls');
        }
        const hopTimeout = AbortSignal.timeout(timeoutMs);
        const signal = AbortSignal.any([ctx.signal, hopTimeout]);
        let answer: Hop;
        try {
          answer = await requestOnce(url, signal, allowPrivate, cap, idempotencyKey);
        } catch (error) {
          if (error instanceof ToolError) throw error;
          if (ctx.signal.aborted) throw abortError(ctx.signal);
          if (hopTimeout.aborted) throw new ToolError('Timeout', `http_fetch: no answer within ${timeoutMs} ms`);
          const code = (error as { code?: unknown }).code;
          throw toolFailed(`http_fetch: request to ${url.hostname} failed${typeof code === 'string' ? ` (${code})` : ''}`, error);
        }
        if (answer.location !== null && REDIRECT_STATUSES.has(answer.status)) {
          if (hop >= maxRedirects) throw toolFailed(`http_fetch: more than ${maxRedirects} redirects`);
          try {
            url = new URL(answer.location, url);
          } catch {
            throw toolFailed('http_fetch: a redirect carries an invalid Location');
          }
          continue;
        }
        if (answer.status >= 500 || answer.status === 429) throw toolFailed(`http_fetch: ${url.hostname} answered ${answer.status}`);
        return toResult(url, answer);
      }
    },
  };
}
