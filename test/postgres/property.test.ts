// The property suite again, on PostgreSQL (which refuses NUL in text, a class of bug SQLite hides): fewer runs.
process.env.IX_TEST_STORAGE = 'postgres';
process.env.IX_PROPERTY_RUNS ??= '2000';
await import('../property.test.ts');
