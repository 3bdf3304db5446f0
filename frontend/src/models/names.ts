/**
 * Short, readable forms of long op and kernel names for table cells and chart legends; the full
 * name stays on hover and in the exported CSV.
 *
 *   shortName('void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<…TensorConversionOp<float, …half…>…>, long>(…)')
 *     → 'EigenMetaKernel<float, TensorConversionOp, half>'
 *   shortName('gradient_tape/matmul_1/MatMul_1') → 'gradient_tape/matmul_1/MatMul_1' (fits)
 *   shortName('model/very/long/scope/of/dense_3/MatMul', 30) → 'model/…/of/dense_3/MatMul'
 */

/** Names up to this many characters are shown whole. */
export const SHORT_NAME_CHARS = 48;

// Template arguments every Eigen / TF kernel carries: they tell no two kernels apart.
const NOISE = new Set([
  'TensorEvaluator', 'TensorAssignOp', 'TensorMap', 'Tensor', 'MakePointer', 'GpuDevice', 'ThreadPoolDevice',
  'DefaultDevice', 'const', 'long', 'int', 'unsigned', 'ul', 'array', 'false', 'true', 'void', 'Aligned', 'RowMajor',
]);

function clip(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

/** The position of the `(` that opens a C++ signature's parameter list (outside `<>`), or -1. */
function parameterListStart(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '<') depth++;
    else if (ch === '>') depth--;
    else if (ch === '(' && depth === 0 && i > 0) return i;
  }
  return -1;
}

/** `void ns::Kernel<A<x>, B>(args)` → `Kernel<x, B>`: the name and what tells its instances apart. */
function cppShortName(name: string, max: number): string {
  let text = name.replace(/^\s*(void|static|__global__)\s+/, '');
  const params = parameterListStart(text);
  if (params > 0) text = text.slice(0, params);
  const open = text.indexOf('<');
  const head = (open >= 0 ? text.slice(0, open) : text).replace(/^.*::/, '');
  if (open < 0) return clip(head, max);
  const words = text.slice(open).match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];
  const telling = [
    ...new Set(
      words
        .filter((w) => !NOISE.has(w) && !/^(Eigen|internal|tensorflow|std|functor|random)$/.test(w))
        .map((w) => w.replace(/^Tensor(\w+)Op$/, '$1').replace(/^scalar_/, '').replace(/_op$/, '')),
    ),
  ];
  return clip(`${head}<${telling.join(', ')}>`, max);
}

/** A readable short form of an op or kernel name (itself when short enough). */
export function shortName(name: string, max = SHORT_NAME_CHARS): string {
  if (name.length <= max) return name;
  if (/[<(]/.test(name) && /::|^\s*void\s/.test(name)) return cppShortName(name, max);
  const parts = name.split('/');
  // Scoped op names: the root scope (which model) and the tail (the op and its scope) tell them
  // apart; the middle is dropped first, then the root.
  for (let keep = parts.length - 2; keep >= 1; keep--) {
    const short = `${parts[0]}/…/${parts.slice(parts.length - keep).join('/')}`;
    if (short.length <= max) return short;
  }
  for (let keep = parts.length - 1; keep >= 1; keep--) {
    const tail = '…/' + parts.slice(parts.length - keep).join('/');
    if (tail.length <= max) return tail;
  }
  return clip(name, max);
}

/** Short forms of `names` that stay distinct: clashes get ` #2`, ` #3`, … in input order. */
export function distinctShortNames(names: readonly string[], max = SHORT_NAME_CHARS): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const short = shortName(name, max);
    const n = (seen.get(short) ?? 0) + 1;
    seen.set(short, n);
    return n === 1 ? short : `${short} #${n}`;
  });
}
