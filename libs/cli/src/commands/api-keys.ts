/** `flowline api-keys`: mint, list, rotate and revoke the tenant's managed API keys. */
import type { Command } from 'commander';
import type { ApiKey, ApiKeyCreate, ApiKeyScope } from '@flowline/client';
import { nonNegativeInt } from '../args';
import { table } from '../format';
import { EXIT } from '../io';
import type { Session, Wrap } from '../session';

const constraintText = (k: ApiKey) =>
  [k.constraints.definitionIds ? `definitions ${k.constraints.definitionIds.join(',')}` : '', k.constraints.cidrs ? `from ${k.constraints.cidrs.join(',')}` : '']
    .filter(Boolean)
    .join('; ');

export function registerApiKeys(program: Command, s: Session, wrap: Wrap): void {
  const keys = program.command('api-keys').description("the tenant's managed API keys: create, list, rotate, revoke");

  keys
    .command('create')
    .description('mint a key (POST /v1/api-keys); prints its id and its secret, shown this once')
    .requiredOption('--name <name>', 'what the key is for')
    .requiredOption('--scopes <list>', 'comma-separated: read, run, operate, define, keys, audit, admin (no more than your key holds)')
    .option('--definition <id...>', 'limit it to these definitions and their runs')
    .option('--cidr <cidr...>', 'limit it to these client networks')
    .option('--expires-at <iso>', 'when it stops working')
    .action(
      wrap(async (o: { name: string; scopes: string; definition?: string[]; cidr?: string[]; expiresAt?: string }) => {
        const body: ApiKeyCreate = {
          name: o.name,
          scopes: o.scopes.split(',').map((x) => x.trim()).filter(Boolean) as ApiKeyScope[],
          ...(o.definition || o.cidr ? { constraints: { ...(o.definition ? { definitionIds: o.definition } : {}), ...(o.cidr ? { cidrs: o.cidr } : {}) } } : {}),
          ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}),
        };
        const k = await s.client().apiKeys.create(body);
        s.print(k, () => `${k.id}\nsecret ${k.secret} (shown once)\n`);
        return EXIT.ok;
      }),
    );

  keys
    .command('list')
    .description("the tenant's keys, newest first (never their secrets)")
    .action(
      wrap(async () => {
        const page = await s.client().apiKeys.list({ limit: 200 });
        s.print(page, () =>
          table(
            ['id', 'name', 'key', 'scopes', 'constraints', 'owner', 'expires', 'last used', 'state'],
            page.items.map((k) => [
              k.id,
              k.name,
              `${k.prefix}_…${k.lastFour}`,
              k.scopes.join(','),
              constraintText(k),
              k.owner,
              k.expiresAt ?? '',
              k.lastUsed ? `${k.lastUsed.at} ${k.lastUsed.address ?? ''}`.trim() : '',
              k.revokedAt ? 'revoked' : 'active',
            ]),
          ),
        );
        return EXIT.ok;
      }),
    );

  keys
    .command('rotate')
    .description('give a key a new secret (printed once); the old one works --grace seconds more')
    .argument('<id>', 'key id')
    .option('--grace <seconds>', 'how long the old secret keeps working', nonNegativeInt, 0)
    .action(
      wrap(async (id: string, o: { grace: number }) => {
        const k = await s.client().apiKeys.rotate(id, o.grace);
        s.print(k, () => `${k.id}\nsecret ${k.secret} (shown once)\n`);
        return EXIT.ok;
      }),
    );

  keys
    .command('revoke')
    .description('revoke a key: every API replica refuses it within seconds')
    .argument('<id>', 'key id')
    .action(
      wrap(async (id: string) => {
        await s.client().apiKeys.revoke(id);
        s.print({ revoked: id }, () => `revoked ${id}\n`);
        return EXIT.ok;
      }),
    );
}
