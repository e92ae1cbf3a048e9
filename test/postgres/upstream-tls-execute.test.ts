// config.tls through execute again, on PostgreSQL: the client key stored encrypted and read back there.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../upstream-tls-execute.test.ts');
