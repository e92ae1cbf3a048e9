// Schema-aware GraphQL checking again, on PostgreSQL: the harness gives each suite a fresh database.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../graphql-schema-aware.test.ts');
