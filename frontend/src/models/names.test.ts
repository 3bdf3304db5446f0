import { describe, expect, it } from 'vitest';
import { distinctShortNames, shortName } from './names';

const EIGEN = (from: string, to: string) =>
  `void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<${to}, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorConversionOp<${to}, Eigen::TensorMap<Eigen::Tensor<${from} const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<${to}, 1, 1, long>, 16, Eigen::MakePointer> const> const, Eigen::GpuDevice>, long)`;

describe('short names', () => {
  it('keeps the kernel and what tells its instances apart', () => {
    expect(shortName(EIGEN('Eigen::half', 'float'))).toBe('EigenMetaKernel<float, Conversion, half>');
    expect(shortName(EIGEN('float', 'Eigen::half'))).toBe('EigenMetaKernel<half, Conversion, float>');
  });

  it('keeps short names whole and the tail of long scoped op names', () => {
    expect(shortName('gradient_tape/matmul_1/MatMul_1')).toBe('gradient_tape/matmul_1/MatMul_1');
    expect(shortName('model/encoder/layer_11/attention/self/query/dense/MatMul', 30)).toBe('model/…/query/dense/MatMul');
    expect(shortName('x'.repeat(60), 10)).toBe('xxxxxxxxx…');
  });

  it('numbers clashes so legend entries differ', () => {
    expect(distinctShortNames(['aa/' + 'b'.repeat(50), 'cc/' + 'b'.repeat(50)], 52)).toEqual(['…/' + 'b'.repeat(50), '…/' + 'b'.repeat(50) + ' #2']);
    expect(distinctShortNames(['a/x/y/' + 'b'.repeat(40), 'c/x/y/' + 'b'.repeat(40)], 44)).toEqual(['a/…/' + 'b'.repeat(40), 'c/…/' + 'b'.repeat(40)]);
  });
});
