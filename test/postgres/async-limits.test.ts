// The async deadline and queue metrics again, on PostgreSQL: the queue is pg-boss.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../async-limits.test.ts');
