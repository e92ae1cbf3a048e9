// The async executions suite again, on PostgreSQL: the queue is pg-boss.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../async-executions.test.ts');
