/**
 * Adds `value` to the list `map` keeps under `key`, making the list on first use: in place, so that a key many
 * values share (a hostile WSDL's 10,000 types derived from one base) costs a push each, not a copy.
 *
 * @example append(byBase, '{urn:x}Shape', circle)
 */
export function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
