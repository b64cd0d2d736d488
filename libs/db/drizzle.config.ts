import { defineConfig } from 'drizzle-kit';

/** `npx drizzle-kit generate` writes committed migrations to ./drizzle from src/schema. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema/index.ts',
  out: './drizzle',
});
