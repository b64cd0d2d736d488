/**
 * Columns more than one table carries, spread into a table's columns (drizzle's reusable column
 * definitions), so each reads the same name, type and constraints wherever it stands.
 */
import { text } from 'drizzle-orm/pg-core';

/** The tenant a row belongs to: every read of a tenant's data filters on it, so another tenant's id reads as absent. */
export const tenantScoped = { tenantId: text('tenant_id').notNull() };
