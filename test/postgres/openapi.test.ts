// The OpenAPI suite again, on PostgreSQL: the replies fit the document whatever storage they come from.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../openapi.test.ts');
