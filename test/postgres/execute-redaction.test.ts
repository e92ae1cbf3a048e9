// The redaction and large-answer suites again, on PostgreSQL: what the executions log keeps of a transformed echo
// is read back from PostgreSQL; the harness gives each suite a fresh database.
process.env.IX_TEST_STORAGE = 'postgres';
await import('../execute-redaction.test.ts');
await import('../large-answers.test.ts');
