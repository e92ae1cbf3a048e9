/**
 * A connection URL fit for logs and error messages: the password is removed (the user name stays, it helps to
 * tell which account was used), and so is the query string, where drivers also accept `password=…`.
 *
 * @example displayUrl('postgres://ix:s3cret@db:5432/ix?sslmode=require') // 'postgres://ix@db:5432/ix'
 */
export function displayUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Unparsable: nothing of it can be shown safely but its scheme.
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(url)?.[0];
    return scheme ? `${scheme}//…` : '…';
  }
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}
