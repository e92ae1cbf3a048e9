/**
 * `nullthrows` as an ES module, for graphql-language-service (the package is published as CommonJS only): `value`,
 * unless it is null or undefined.
 */
export default function nullthrows(value, message = `Got unexpected ${value}`) {
  if (value !== null && value !== undefined) return value;
  const error = new Error(message);
  error.framesToPop = 1;
  throw error;
}
