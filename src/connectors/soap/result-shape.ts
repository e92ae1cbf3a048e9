import { type ComplexModel, integerBuiltins, type SimpleModel, type TypeModel } from './schema-model.ts';

/**
 * A WSDL-mode result shaped by the output's schema (API.md section 6): an element that may repeat (`maxOccurs > 1`)
 * is always a list, even with one item or none read as one, and numbers and booleans the XML carried as text are
 * typed when their schema type says so. Unknown elements (`xsd:any`, or what the schema does not declare) stay as
 * node-soap read them.
 *
 * @example shapeResult(model, { lines: { sku: 'A', quantity: '2' } }) // { lines: [{ sku: 'A', quantity: 2 }] }
 */
export function shapeResult(model: ComplexModel, value: unknown): unknown {
  if (!isPlainObject(value) || model.arrayOf) return value;
  const byName = new Map(model.particles.map((p) => [p.name, p]));
  const shaped: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const particle = byName.get(key);
    if (!particle) {
      shaped[key] = item;
      continue;
    }
    const items = particle.repeated && !Array.isArray(item) ? [item] : item;
    shaped[key] = Array.isArray(items) ? items.map((one) => shapeValue(particle.model, one)) : shapeValue(particle.model, items);
  }
  return shaped;
}

function shapeValue(model: TypeModel, value: unknown): unknown {
  if (model.kind === 'complex') return shapeResult(model, value);
  return typeof value === 'string' ? typedText(model, value) : value;
}

/** Text as the number or boolean its type says, when it is one exactly; an integer beyond 2^53 stays text. */
function typedText(model: SimpleModel, text: string): unknown {
  const trimmed = text.trim();
  if (model.builtin === 'boolean') {
    if (trimmed === 'true' || trimmed === '1') return true;
    if (trimmed === 'false' || trimmed === '0') return false;
    return text;
  }
  if (integerBuiltins.has(model.builtin) && /^[+-]?\d+$/.test(trimmed)) {
    const n = Number(trimmed);
    return Number.isSafeInteger(n) ? n : text;
  }
  if ((model.builtin === 'double' || model.builtin === 'float') && /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) {
    return Number(trimmed);
  }
  return text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
