// The upstream credential suites again, on PostgreSQL: secrets inside objects stored, merged and read back there.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../upstream-auth.test.ts');
await import('../upstream-oauth2.test.ts');
