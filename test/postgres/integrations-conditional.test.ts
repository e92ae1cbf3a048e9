// Conditional writes again, on PostgreSQL: the twenty racing creates meet one row lock.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../integrations-conditional.test.ts');
