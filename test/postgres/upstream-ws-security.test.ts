// config.ws_security through execute again, on PostgreSQL: its secrets stored encrypted and read back there.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../upstream-ws-security.test.ts');
