// The resilience suite again, on PostgreSQL with its queue (pg-boss) and Redis for the breakers: the harness gives each
// suite a fresh database, and the suite a Redis prefix of its own.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../resilience-execute.test.ts');
