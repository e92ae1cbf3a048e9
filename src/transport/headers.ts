/**
 * A header of an upstream answer by name, whatever case the map writes it in (undici's are lower case; answers
 * copied into a worker thread, or made by tests, need not be).
 *
 * @example headerNamed({ 'Content-Type': 'text/xml' }, 'content-type') // 'text/xml'
 */
export function headerNamed(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}
