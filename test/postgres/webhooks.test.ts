// The webhooks suite again, on PostgreSQL: deliveries are pg-boss jobs there.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../webhooks.test.ts');
