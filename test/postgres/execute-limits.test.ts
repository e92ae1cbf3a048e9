// The execute-limits and WSDL-loading-limits suites again, on PostgreSQL: the harness gives each suite a fresh
// database. The server-process memory test is storage-independent and runs once, on SQLite.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../execute-limits.test.ts');
await import('../wsdl-loading-limits.test.ts');
