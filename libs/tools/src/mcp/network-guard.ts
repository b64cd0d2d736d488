/**
 * The SSRF guard of MCP server URLs — the address policy of `http_fetch`
 * (builtins/address-policy.ts) applied to every connection: http(s) only, no credentials in
 * the URL, and no private, loopback or link-local address unless the host is in the
 * deployment's MCP_ALLOWED_HOSTS. A host name is resolved with every address checked, and the
 * connection goes to the checked addresses (the check sits in the socket's `lookup`), so a
 * DNS answer cannot change between check and connect. Redirects are not followed.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isPrivateAddress } from '../builtins/address-policy';
import { toolInvalid } from '../tool-error';

/** Normalised MCP_ALLOWED_HOSTS entries: lower-case host names or IP literals (IPv6 without brackets). */
export type AllowedHosts = ReadonlySet<string>;

/** Parses MCP_ALLOWED_HOSTS (comma-separated host names or IP literals). */
export function parseAllowedHosts(text: string | null | undefined): AllowedHosts {
  const hosts = (text ?? '').split(',').map((h) => unbracket(h.trim().toLowerCase())).filter((h) => h !== '');
  return new Set(hosts);
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Checks a server URL as far as it can be without resolving it: the form, and an IP literal
 * host against the policy. A host name is checked when the connection resolves it.
 * @returns the parsed URL
 * @throws ToolError ValidationFailed naming the rule broken (never the URL's query)
 */
export function checkServerUrl(text: string, allowed: AllowedHosts): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw toolInvalid('the MCP server url is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw toolInvalid('the MCP server url must be http(s)');
  if (url.username !== '' || url.password !== '') throw toolInvalid('the MCP server url must not carry credentials (send them as headers)');
  const host = unbracket(url.hostname.toLowerCase());
  if (isIP(host) !== 0 && isPrivateAddress(host) && !allowed.has(host)) {
    throw toolInvalid(`MCP server host ${host} is a private address (allow it with MCP_ALLOWED_HOSTS)`);
  }
  return url;
}

/** A fetch for MCP transports that refuses private addresses of hosts outside `allowed`. */
export function guardedFetch(allowed: AllowedHosts): FetchLike {
  const dispatcher = new Agent({
    connect: {
      lookup: (hostname, options, callback) => {
        const host = unbracket(hostname.toLowerCase());
        dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses: LookupAddress[]) => {
          if (err) return callback(err, '', 0);
          if (addresses.length === 0 || (!allowed.has(host) && addresses.some((a) => isPrivateAddress(a.address)))) {
            return callback(toolInvalid(`MCP server host ${host} resolves to a private address (allow it with MCP_ALLOWED_HOSTS)`), '', 0);
          }
          if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          const first = addresses[0] as LookupAddress;
          return callback(null, first.address, first.family);
        });
      },
    },
  });
  return (async (input: string | URL, init?: RequestInit) => {
    const url = checkServerUrl(String(input), allowed);
    return undiciFetch(url, { ...(init as object), dispatcher, redirect: 'manual' } as Parameters<typeof undiciFetch>[1]);
  }) as unknown as FetchLike;
}
