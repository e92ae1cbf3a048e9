// The sign-in-limits suite again, on PostgreSQL: the harness gives each suite a fresh database.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../sign-in-limits.test.ts');
